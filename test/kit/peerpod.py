"""A leaderd started in-cluster as a peer's pod, for the compat tests
(test/integration/test_compat_*.py): a service-account directory (token,
namespace, ca.crt) that the fake API knows, the in-cluster environment
pointing at the fake API, stderr to a log file.  Each peer's test file
subclasses PeerPod with its own command line and environment, and makes
its `pods` fixture with pods_fixture().

Python 3.11 standard library and pytest only."""

import os
import shutil
import signal
import subprocess

import pytest

from harness import leaderd_binary


class PeerPod:
    """One pod's directory (<tmp>/<name>: sa/, stderr.log) and, once
    launch() ran, its leaderd process.  A subclass's __init__ calls
    PeerPod.__init__, builds argv and the environment (from
    incluster_env()), then calls launch()."""

    namespace = None            # the namespace file says: set by a subclass
    # Variables of the test runner's environment that would reach past
    # the in-cluster config, or that the peer reads: never inherited.
    unset = ("POD_NAME", "POD_NAMESPACE", "KUBECONFIG")
    unset_prefixes = ()

    def __init__(self, api, tmp, name):
        self.api = api
        self.name = name
        self.dir = os.path.join(str(tmp), name)
        self.sa = os.path.join(self.dir, "sa")
        os.makedirs(self.sa)
        self.token = "tok-%s" % name
        api.add_token(self.token)
        # 0600: the token is a secret, the namespace file beside it too.
        for fname, text in (("token", self.token + "\n"),
                            ("namespace", self.namespace + "\n")):
            fd = os.open(os.path.join(self.sa, fname),
                         os.O_WRONLY | os.O_CREAT, 0o600)
            os.write(fd, text.encode())
            os.close(fd)
        shutil.copy(os.path.join(api.dir, "ca.crt"), self.sa)
        self.log = os.path.join(self.dir, "stderr.log")
        self.proc = None

    def incluster_env(self):
        """The test runner's environment without `unset` and
        `unset_prefixes`, with the in-cluster variables leaderd reads:
        the API server's address and the service-account directory."""
        e = {k: v for k, v in os.environ.items()
             if k not in self.unset and
             not k.startswith(tuple(self.unset_prefixes))}
        e.update({"KUBERNETES_SERVICE_HOST": "127.0.0.1",
                  "KUBERNETES_SERVICE_PORT": str(self.api.port),
                  "LEADERD_SA_DIR": self.sa})
        return e

    def launch(self, argv, env, cwd=None):
        """Start leaderd with argv, argv[0] included as the peer's
        image gives it (the binary is leaderd_binary() whatever it
        says)."""
        self.argv = list(argv)
        self.spawn(self.argv, env, executable=leaderd_binary(), cwd=cwd)

    def spawn(self, args, env, executable=None, cwd=None):
        """Popen args as the pod's process, stdin from /dev/null, stdout
        and stderr to the log."""
        with open(self.log, "wb") as err:
            self.proc = subprocess.Popen(
                args, executable=executable, cwd=cwd,
                stdin=subprocess.DEVNULL, stdout=err, stderr=err, env=env)

    def stop(self):
        """SIGKILL, as a node's crash or a deleted pod's kill: nothing
        is released."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(5)

    def kill(self):
        """stop(), by the name the nais tests use."""
        self.stop()

    def text(self):
        """What the pod wrote to stderr (and stdout) so far."""
        with open(self.log, errors="replace") as f:
            return f.read()


def pods_fixture(cls):
    """A `pods` fixture for cls: pods(*args, **kw) starts cls(api,
    tmp_path, *args, **kw) and returns it; every pod started is killed
    (stop()) at teardown.  Use as `pods = pods_fixture(MyPod)` in a test
    module."""
    @pytest.fixture
    def pods(api, tmp_path):
        started = []

        def start(*args, **kw):
            p = cls(api, tmp_path, *args, **kw)
            started.append(p)
            return p
        yield start
        for p in started:
            p.stop()
    return pods
