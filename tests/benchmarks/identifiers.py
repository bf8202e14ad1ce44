"""Benchmark: look-alike keys per second, their share of a login's CPU, and the time a
``pip install`` of the app takes beside django-allauth's.

Run ``make bench`` or ``python -m tests.benchmarks.identifiers [--names N] [--logins L]
[--skip-install]``.

1. Keys: ``username_skeleton_key`` (NFKC, case folding, the UTS #39 skeleton and its fold,
   over the pinned data of accounts/unicode_data) of ``N`` generated usernames (default
   10^5: ASCII, Latin with accents, Cyrillic, and Japanese mixing kana, Han and Latin), in
   keys per second, beside the PyICU implementation it replaced when PyICU is installed
   (tests/engine/pyicu_identifiers.py).
2. Login profile: ``L`` logins through the login page (Django's test client, in process)
   against a DynamoDB Local of its own, under cProfile (CPU time), with the site's password hasher
   (Argon2) and with the tests' fast one (MD5: the worst case for the keys' share): the
   share of the CPU spent in accounts/identifiers.py and accounts/unicode_data.
3. Install: ``pip install <the wheel>[demo,audit]`` into an empty virtualenv, from a warm
   pip cache and from a cold one (``PIP_CACHE_DIR`` set to a new empty directory: every
   wheel is downloaded), beside ``pip install django-allauth`` the same two ways, each
   with ``--only-binary :all:`` (no compiler), in seconds of wall time.
"""

import argparse
import cProfile
import os
import pstats
import random
import subprocess
import sys
import tempfile
import time
import uuid
import venv
from pathlib import Path

from accounts.dynamodb_local import DynamoDBLocal
from tests.benchmarks import configure_django

LATIN_ACCENTED = "àáâäãåçèéêëìíîïñòóôöõøùúûüýÿćčďěłńňřśšťůźżž"
CYRILLIC = "абвгдежзийклмнопрстуфхцчшщъыьэюя"
KANA = "あいうえおかきくけこさしすせそたちつてとなにぬねのアイウエオカキクケコサシスセソ"
HAN = "山田中村小林高橋佐藤鈴木伊藤渡辺加藤吉田"
ASCII = "abcdefghijklmnopqrstuvwxyz0123456789._-"


def usernames(count, seed=36):
    """``count`` usernames, a quarter of each kind: ASCII, accented Latin, Cyrillic, and
    Japanese (kana and Han, some with a Latin tail)."""
    chance = random.Random(seed)
    made = []
    for index in range(count):
        length = chance.randint(4, 16)
        kind = index % 4
        if kind == 0:
            name = "".join(chance.choice(ASCII) for _ in range(length))
        elif kind == 1:
            name = "".join(
                chance.choice(LATIN_ACCENTED if chance.random() < 0.3 else ASCII[:26]) for _ in range(length)
            )
        elif kind == 2:
            name = "".join(chance.choice(CYRILLIC) for _ in range(length)).capitalize()
        else:
            name = "".join(chance.choice(KANA + HAN) for _ in range(length // 2 + 1))
            name += "taro" if chance.random() < 0.5 else ""
        made.append(name)
    return made


def keys_per_second(function, names):
    started = time.perf_counter()
    for name in names:
        function(name)
    return len(names) / (time.perf_counter() - started)


def bench_keys(count):
    from accounts import identifiers

    names = usernames(count)
    print(f"Look-alike keys (username_skeleton_key) of {count} generated usernames:")
    pure = keys_per_second(identifiers.username_skeleton_key, names)
    print(f"  pure Python over the pinned data: {pure:,.0f} keys/s")
    try:
        from tests.engine import pyicu_identifiers
    except ImportError:
        print("  PyICU: not installed (pip install PyICU or icukit-pyicu to compare)")
        return
    import icu

    old = keys_per_second(pyicu_identifiers.old_username_skeleton_key, names)
    print(f"  PyICU (ICU {icu.ICU_VERSION}): {old:,.0f} keys/s ({pure / old:.2f} x)")


def profiled_logins(logins, hashers):
    """The share of a login's CPU in the identifier code, over ``logins`` logins."""
    from django.conf import settings
    from django.contrib.auth.hashers import get_hashers, get_hashers_by_algorithm, make_password
    from django.test import Client

    from accounts import store
    from tests.web import PASSWORD, login

    settings.PASSWORD_HASHERS = hashers
    get_hashers.cache_clear()
    get_hashers_by_algorithm.cache_clear()
    username = f"bench{uuid.uuid4().hex[:8]}"
    store.signup(f"{username}@example.com", username, make_password(PASSWORD), email_verified=True)
    profile = cProfile.Profile(time.process_time)  # CPU, not the waits on DynamoDB
    for _ in range(logins):
        client = Client()
        profile.enable()
        response = login(client, username, PASSWORD)
        profile.disable()
        assert response.status_code == 302, response.status_code
    stats = pstats.Stats(profile)
    total = sum(row[2] for row in stats.stats.values())
    identifier_files = (os.path.join("accounts", "identifiers.py"), os.path.join("accounts", "unicode_data"))
    ours = sum(row[2] for (path, _, _), row in stats.stats.items() if any(part in path for part in identifier_files))
    return ours, total


def bench_login_profile(logins):
    from django.conf import settings
    from django.test.utils import setup_test_environment

    setup_test_environment()  # the test client's host, "testserver", is allowed
    fast = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    print(f"Share of a login's CPU in accounts/identifiers.py and accounts/unicode_data ({logins} logins, cProfile):")
    for label, hashers in (("site's hasher (Argon2)", settings.PASSWORD_HASHERS), ("fast hasher (MD5)", fast)):
        ours, total = profiled_logins(logins, hashers)
        print(
            f"  {label}: {ours * 1000 / logins:.3f} ms of {total * 1000 / logins:.1f} ms a login ({ours / total:.2%})"
        )


def timed_install(requirement, cache_dir):
    """Seconds of ``pip install --only-binary :all: requirement`` into an empty venv."""
    with tempfile.TemporaryDirectory() as scratch:
        environment = Path(scratch) / "venv"
        venv.create(environment, with_pip=True)
        command = [str(environment / "bin" / "python"), "-m", "pip", "install", "--quiet", "--only-binary", ":all:"]
        env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        if cache_dir is not None:
            env["PIP_CACHE_DIR"] = cache_dir
        started = time.perf_counter()
        subprocess.run([*command, requirement], check=True, env=env)
        return time.perf_counter() - started


def bench_install():
    from tests.projects import build_wheel

    with tempfile.TemporaryDirectory() as scratch:
        wheel = build_wheel(Path(scratch) / "repository", Path(scratch) / "wheel")
        ours = f"{wheel}[demo,audit]"
        print("pip install --only-binary :all: into an empty venv (s, wall):")
        for label, requirement in (("django-dynamo-accounts[demo,audit]", ours), ("django-allauth", "django-allauth")):
            timed_install(requirement, None)  # fills the machine's pip cache: the next run is warm
            warm = timed_install(requirement, None)
            with tempfile.TemporaryDirectory() as empty_cache:
                cold = timed_install(requirement, empty_cache)
            print(f"  {label}: warm cache {warm:.1f} s, cold cache {cold:.1f} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", type=int, default=100_000, help="usernames to key (default 10^5)")
    parser.add_argument("--logins", type=int, default=50, help="logins to profile (default 50)")
    parser.add_argument("--skip-install", action="store_true", help="leave out the pip install timings")
    args = parser.parse_args()
    with DynamoDBLocal() as engine:
        configure_django(engine.endpoint_url, f"bench-identifiers-{uuid.uuid4().hex[:8]}")
        bench_keys(args.names)
        bench_login_profile(args.logins)
    if not args.skip_install:
        bench_install()
    sys.stdout.flush()


if __name__ == "__main__":
    main()
