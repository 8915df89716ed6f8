// Server-sent events read from a fetch() body (EventSource cannot POST).
//
// W3C rules: lines end in CRLF, LF or CR (a CR may end one chunk and its LF
// start the next); `data:` lines join with "\n"; lines starting with ":" are
// comments (heartbeats); a blank line dispatches the event.

export class SSEParser {
  constructor(onEvent) {
    this.onEvent = onEvent;
    this.pending = "";
    this.afterCR = false;
    this.data = [];
    this.type = "";
    this.lastId = "";
  }

  feed(chunk) {
    let text = this.pending + chunk;
    if (this.afterCR && text.startsWith("\n")) text = text.slice(1);
    this.afterCR = text.endsWith("\r");
    const lines = text.split(/\r\n|\r|\n/);
    this.pending = lines.pop();
    for (const line of lines) this.line(line);
  }

  /** End of the body: a last event without its blank line is still delivered. */
  end() {
    if (this.pending) this.line(this.pending);
    this.pending = "";
    this.dispatch();
  }

  line(line) {
    if (line === "") {
      this.dispatch();
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.data.push(value);
    else if (field === "event") this.type = value;
    else if (field === "id" && !value.includes("\0")) this.lastId = value;
  }

  dispatch() {
    if (this.data.length) {
      this.onEvent({ data: this.data.join("\n"), type: this.type || "message", id: this.lastId });
    }
    this.data = [];
    this.type = "";
  }
}

/** Read a ReadableStream of bytes to its end, calling onEvent for each event. */
export async function readEvents(body, onEvent) {
  const parser = new SSEParser(onEvent);
  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
    }
    parser.feed(decoder.decode());
    parser.end();
  } finally {
    reader.releaseLock();
  }
}
