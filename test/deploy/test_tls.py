"""The image's binary (static, over Mbed TLS) against the TLS cases
every build must pass (test/kit/tlscases.py): RSA and ECDSA servers on
TLS 1.2 and 1.3, the server certificate held to client-go's rules, a
broken ServerHello refused at once.  `make deploy-test` sets LEADERD to
that binary."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "kit"))

from tlscases import *  # noqa: E402,F401,F403
