"""Regenerate the 1.0 gRPC service's descriptors from the vendored proto (generated code).

    pip install 'grpcio-tools==1.85.1' 'googleapis-common-protos==1.76.0'
    python scripts/regenerate_grpc.py            # rewrites the committed file
    python scripts/regenerate_grpc.py --check    # exit 1 when the committed file differs

What it runs is protoc (the one inside grpcio-tools, pinned above) on the unmodified
``a2a_core/schemas/a2a-v1.0.proto`` and google.rpc's status, error details and codes,
writing a ``FileDescriptorSet`` with every import
(google/api from googleapis-common-protos, google/protobuf from grpcio-tools) to
``a2a_core/schemas/_generated/a2a-v1.0.binpb``. The server and client build their message
classes from it in a private descriptor pool (:mod:`a2a_core.grpc_proto`), so the official
SDK's own ``lf.a2a.v1`` classes can live in the same process. Both pins matter: another
protoc or another google/api may write other bytes (tests/grpc/test_generated.py checks).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_DIR = ROOT / "a2a_core" / "schemas"
PROTO = "a2a-v1.0.proto"
#: google.rpc's Status, its error details and its codes: how a gRPC error carries an A2A one.
RPC_PROTOS = ("google/rpc/status.proto", "google/rpc/error_details.proto",
              "google/rpc/code.proto")
OUTPUT = PROTO_DIR / "_generated" / "a2a-v1.0.binpb"
#: The versions the committed file was generated with.
PINS = {"grpcio-tools": "1.85.1", "googleapis-common-protos": "1.76.0"}


def generate(out: Path) -> None:
    """Run the pinned protoc on the vendored proto, writing the descriptor set to ``out``."""
    from importlib import metadata, resources

    import google.api
    from grpc_tools import protoc

    for package, pinned in PINS.items():
        found = metadata.version(package)
        if found != pinned:
            raise SystemExit(f"{package} {found} is installed; the pinned version is {pinned}")
    well_known = str(resources.files("grpc_tools") / "_proto")
    google_api = str(Path(next(iter(google.api.__path__))).parent.parent)
    code = protoc.main([
        "protoc", f"-I{PROTO_DIR}", f"-I{google_api}", f"-I{well_known}",
        "--include_imports", f"--descriptor_set_out={out}", PROTO, *RPC_PROTOS,
    ])
    if code != 0:
        raise SystemExit(f"protoc failed ({code})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the committed file instead of writing it")
    args = parser.parse_args(argv)
    if not args.check:
        generate(OUTPUT)
        print(f"wrote {OUTPUT.relative_to(ROOT)}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / OUTPUT.name
        generate(fresh)
        if fresh.read_bytes() != OUTPUT.read_bytes():
            print(f"{OUTPUT.relative_to(ROOT)} differs from what protoc generates now",
                  file=sys.stderr)
            return 1
    print(f"{OUTPUT.relative_to(ROOT)} matches the proto")
    return 0


if __name__ == "__main__":
    sys.exit(main())
