-- wrk script for every scenario; the scenario comes from the environment (run.py sets it):
--   BENCH_MODE   card | card304 | send | stream | slow
--   BENCH_ETAG   the card's ETag (card304)
--   BENCH_N      events per stream (stream); milliseconds the agent waits (slow)
--   BENCH_SEED   a value unique to this run, for the messageIds
-- Each SendMessage carries a fresh messageId, as a real client's would.
-- done() prints one machine-readable line that run.py parses.

local mode = os.getenv("BENCH_MODE") or "card"
local etag = os.getenv("BENCH_ETAG") or ""
local events = os.getenv("BENCH_N") or "20"
local card_path = "/.well-known/agent-card.json"
local counter = 0
-- Unique per wrk run: an unseeded math.random gives every run the same prefix, so a
-- later run would resend earlier messageIds and be answered from the idempotency
-- record without running the agent. run.py sets BENCH_SEED to a fresh value.
local prefix = os.getenv("BENCH_SEED") or tostring(os.time())

local json_headers = {
  ["Content-Type"] = "application/json",
  ["A2A-Version"] = "1.0",
}
local sse_headers = {
  ["Content-Type"] = "application/json",
  ["A2A-Version"] = "1.0",
  ["Accept"] = "text/event-stream",
}

local function body(method, text)
  counter = counter + 1
  return string.format(
    '{"jsonrpc":"2.0","id":%d,"method":"%s","params":{"message":' ..
    '{"messageId":"m-%s-%d","role":"ROLE_USER","parts":[{"text":"%s"}]}}}',
    counter, method, prefix, counter, text)
end

if mode == "card" then
  wrk.method = "GET"
  wrk.path = card_path
elseif mode == "card304" then
  wrk.method = "GET"
  wrk.path = card_path
  wrk.headers["If-None-Match"] = etag
end

if mode == "send" then
  request = function()
    return wrk.format("POST", "/", json_headers, body("SendMessage", "hello"))
  end
elseif mode == "slow" then
  request = function()
    return wrk.format("POST", "/", json_headers, body("SendMessage", "slow " .. events))
  end
elseif mode == "stream" then
  request = function()
    return wrk.format("POST", "/", sse_headers,
                      body("SendStreamingMessage", "stream " .. events))
  end
end

-- No response() callback: defining one makes wrk hand every response to Lua,
-- which would make the load generator the bottleneck. Statuses >= 400 are
-- counted by wrk itself (err_status); run.py checks each response once by hand.

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"duration_us":%d,"bytes":%d,"p50_us":%d,"p90_us":%d,' ..
    '"p99_us":%d,"max_us":%d,"mean_us":%.1f,"err_connect":%d,"err_read":%d,' ..
    '"err_write":%d,"err_status":%d,"err_timeout":%d}\n',
    summary.requests, summary.duration, summary.bytes,
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency.max, latency.mean, e.connect, e.read, e.write, e.status, e.timeout))
end
