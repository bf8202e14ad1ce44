"""The suite hashes passwords with MD5 (fast), except where hashing is what a test measures:
``@pytest.mark.argon2`` gives a test the demo site's Argon2, as production hashes."""

import pytest
from django.contrib.auth.hashers import check_password, get_hasher, make_password

import project.settings


def test_a_test_hashes_with_md5_and_still_verifies_the_demos_argon2_hashes():
    argon2 = make_password("a password", hasher="argon2")

    assert get_hasher().algorithm == "md5"
    assert make_password("a password").startswith("md5$")
    assert check_password("a password", argon2)


@pytest.mark.argon2
def test_a_test_marked_argon2_hashes_as_the_demo_site_does(settings):
    assert settings.PASSWORD_HASHERS == project.settings.PASSWORD_HASHERS
    assert get_hasher().algorithm == "argon2"
    assert make_password("a password").startswith("argon2$argon2id$")
