"""``make run``: DynamoDB Local (data under var/dynamodb/) + the table + Django's runserver.

Ctrl-C stops both processes. When ``DYNAMODB_ENDPOINT_URL`` is already set (environment
or .env), that endpoint is used and no DynamoDB Local is started.
"""

import os
import subprocess
import sys
from pathlib import Path

import environ

from accounts.dynamodb_local import PREFIX_VARIABLE, DynamoDBLocal, DynamoDBLocalError

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = BASE_DIR / "var" / "dynamodb"
# The demo keeps its copy of DynamoDB Local in var/, as `make` does.
DYNAMODB_LOCAL_PREFIX = BASE_DIR / "var" / "dynamodb-local"


def manage(*args):
    return subprocess.run([sys.executable, str(BASE_DIR / "manage.py"), *args], check=False).returncode


def main():
    environ.Env.read_env(BASE_DIR / ".env")
    os.environ.setdefault("DJANGO_DEBUG", "1")
    local = None
    if not os.environ.get("DYNAMODB_ENDPOINT_URL"):
        port = int(os.environ.get("DYNAMODB_LOCAL_PORT", "8001"))
        prefix = os.environ.get(PREFIX_VARIABLE) or DYNAMODB_LOCAL_PREFIX
        local = DynamoDBLocal(
            port=port, db_path=DATA_DIR, prefix=prefix, log_path=BASE_DIR / "var" / "dynamodb-local.log", fetch=True
        )
        try:
            local.start()
        except DynamoDBLocalError as error:
            sys.exit(str(error))
        os.environ["DYNAMODB_ENDPOINT_URL"] = local.endpoint_url
        print(f"DynamoDB Local {local.endpoint_url} (data in {DATA_DIR}; it listens on every interface)")
    address = os.environ.get("DJANGO_RUNSERVER_ADDRESS", "127.0.0.1:8000")
    # Links in the mails the terminal prints lead to this server (by name: see settings.py).
    os.environ.setdefault("ACCOUNTS_SITE_URL", f"http://localhost:{address.rpartition(':')[2]}")
    try:
        if manage("accounts_createtable") != 0:
            sys.exit("Could not create the accounts table.")
        manage("runserver", address)
    except KeyboardInterrupt:
        pass
    finally:
        if local is not None:
            local.stop()
            print("DynamoDB Local stopped.")


if __name__ == "__main__":
    main()
