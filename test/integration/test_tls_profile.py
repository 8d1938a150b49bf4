"""The TLS cases every build must pass (test/kit/tlscases.py), on the
binary under test: the shared build over OpenSSL by default, the static
one with `make STATIC=1 integration`.  test/deploy/test_tls.py runs the
same cases on the image's binary."""

from tlscases import *  # noqa: F401,F403
