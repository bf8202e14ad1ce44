"""``make run``: AWS DynamoDB Local (data under var/dynamodb/), the table, then Django's runserver.

The site is served only once DynamoDB Local answers the requests of a sign-up well within
the request deadline: a JVM that has just started answers its first requests in seconds,
and the first sign-up would otherwise end in "we cannot tell whether this was saved".
Ctrl-C or SIGTERM stops the server and DynamoDB Local and waits for both, so the next
``make run`` finds its ports free.

``make run PORT=8000 DYNAMODB_LOCAL_PORT=8001`` (the defaults) choose the ports;
``DYNAMODB_LOCAL_HOST=0.0.0.0`` lets DynamoDB Local listen on every interface instead of
127.0.0.1 alone; ``DJANGO_RUNSERVER_ADDRESS`` (``0.0.0.0:8000``) serves the site on another
address than 127.0.0.1. When ``DYNAMODB_ENDPOINT_URL`` is set (environment or .env), that
endpoint is used and no DynamoDB Local is started.
"""

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path

import environ

from accounts.dynamodb_local import LOOPBACK, PREFIX_VARIABLE, DynamoDBLocal, DynamoDBLocalError, warm_up

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = BASE_DIR / "var" / "dynamodb"
# The demo keeps its copy of DynamoDB Local in var/, as `make` does.
DYNAMODB_LOCAL_PREFIX = BASE_DIR / "var" / "dynamodb-local"
# ACCOUNTS_REQUEST_DEADLINE, which the demo leaves at the app's default: a web request waits
# at most this long on DynamoDB. DynamoDB Local is warm once a sign-up's requests, all of
# them, answer within a quarter of it.
REQUEST_DEADLINE = 5
WARM_WITHIN = REQUEST_DEADLINE / 4
WARM_UP_TIMEOUT = 180
# How long the server gets to stop after Ctrl-C before it is killed.
STOP_SECONDS = 3


def manage(*args: str) -> int:
    return subprocess.run([sys.executable, str(BASE_DIR / "manage.py"), *args], check=False).returncode


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT") or 8000), help="the site's port")
    parser.add_argument(
        "--dynamodb-port",
        type=int,
        default=int(os.environ.get("DYNAMODB_LOCAL_PORT") or 8001),
        help="DynamoDB Local's port",
    )
    parser.add_argument(
        "--dynamodb-host",
        default=os.environ.get("DYNAMODB_LOCAL_HOST") or LOOPBACK,
        help="the address DynamoDB Local listens on (0.0.0.0: every interface)",
    )
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR, help="where DynamoDB Local keeps its data")
    return parser.parse_args(argv)


def start_dynamodb_local(args: argparse.Namespace) -> DynamoDBLocal:
    """Start DynamoDB Local and warm it; exits with the reason when it cannot start."""
    prefix = os.environ.get(PREFIX_VARIABLE) or DYNAMODB_LOCAL_PREFIX
    local = DynamoDBLocal(
        port=args.dynamodb_port,
        host=args.dynamodb_host,
        db_path=args.data_dir,
        prefix=prefix,
        log_path=BASE_DIR / "var" / "dynamodb-local.log",
        fetch=True,
    )
    try:
        local.start()
    except DynamoDBLocalError as error:
        sys.exit(str(error))
    where = "every interface" if local.listens_everywhere else f"{local.host} only"
    print(f"DynamoDB Local {local.endpoint_url} (data in {args.data_dir}; listening on {where})", flush=True)
    warmed = warm_up(local.endpoint_url, within=WARM_WITHIN, timeout=WARM_UP_TIMEOUT)
    if warmed.warm:
        print(
            f"DynamoDB Local answered a sign-up's requests in {warmed.last_round:.2f} s "
            f"(warmed up in {warmed.seconds:.0f} s, {warmed.rounds} round(s)).",
            flush=True,
        )
    else:
        print(
            f"DynamoDB Local still takes {warmed.last_round:.1f} s for a sign-up's requests after "
            f"{warmed.seconds:.0f} s: the first pages may answer 503 until it is warm (a loaded machine?).",
            flush=True,
        )
    return local


def stop_server(server: subprocess.Popen) -> None:
    """Stop runserver and the process its autoreloader started (its process group): Ctrl-C,
    then, if it is still there after :data:`STOP_SECONDS`, SIGKILL."""
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGINT)
        try:
            server.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(server.pid, signal.SIGKILL)  # the reloader's child, if its parent left it
    except ProcessLookupError:
        pass
    server.wait()


def interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    environ.Env.read_env(BASE_DIR / ".env")
    os.environ.setdefault("DJANGO_DEBUG", "1")
    # SIGTERM (`kill`, or make passing on its own) stops everything as Ctrl-C does.
    signal.signal(signal.SIGTERM, interrupt)
    local = server = None
    address = os.environ.get("DJANGO_RUNSERVER_ADDRESS") or f"{LOOPBACK}:{args.port}"
    # Links in the mails the terminal prints lead to this server (by name: see settings.py).
    os.environ.setdefault("ACCOUNTS_SITE_URL", f"http://localhost:{address.rpartition(':')[2]}")
    try:
        if not os.environ.get("DYNAMODB_ENDPOINT_URL"):
            local = start_dynamodb_local(args)
            os.environ["DYNAMODB_ENDPOINT_URL"] = local.endpoint_url
        if manage("accounts_createtable") != 0:
            sys.exit("Could not create the accounts table.")
        # A process group of its own: stopping it stops the autoreloader's child too.
        server = subprocess.Popen(
            [sys.executable, str(BASE_DIR / "manage.py"), "runserver", address], start_new_session=True
        )
        server.wait()
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one must not cut the clean-up short
        if server is not None:
            stop_server(server)
        if local is not None:
            local.stop()
            print("DynamoDB Local stopped.", flush=True)


if __name__ == "__main__":
    main()
