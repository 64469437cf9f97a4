"""A throwaway PostgreSQL server for the tests: Debian's `postgresql`
binaries, a cluster in a temporary directory, listening only on a Unix
socket there, trusting local connections. Run as root, the server runs as
the `postgres` user (initdb refuses root). None where the binaries or
python3-psycopg2 are missing (the tests then skip, saying so)."""
import glob
import os
import shutil
import subprocess
import tempfile
import time


def binaries():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return os.path.dirname(found[-1]) if found else None


def available():
    """None when a server can be started here, else why not."""
    try:
        import psycopg2  # noqa: F401
    except ImportError:
        return "python3-psycopg2 is not installed"
    if not binaries():
        return "PostgreSQL is not installed (Debian's postgresql)"
    if os.geteuid() == 0 and not shutil.which("runuser"):
        return "running as root without runuser"
    return None


class Server:
    def __init__(self):
        self.bin = binaries()
        self.dir = tempfile.mkdtemp(prefix="parbench-pg-")
        os.chmod(self.dir, 0o777)
        self.data = os.path.join(self.dir, "data")
        self.as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        self._run([os.path.join(self.bin, "initdb"), "-D", self.data, "-U", "postgres", "--auth=trust",
                   "-E", "UTF8", "--no-sync"])
        self._run([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-w", "-l", os.path.join(self.dir, "log"),
                   "-o", "-c listen_addresses='' -c unix_socket_directories=%s -c fsync=off" % self.dir, "start"])
        self.url = "postgresql://postgres@/postgres?host=%s" % self.dir

    def _run(self, cmd):
        p = subprocess.run(self.as_user + cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True, timeout=120)
        if p.returncode != 0:
            raise RuntimeError("%s: %s" % (" ".join(cmd[:2]), p.stdout.strip()[-500:]))

    def database(self, name):
        """A new, empty database: its URL."""
        import psycopg2
        con = psycopg2.connect(self.url)
        con.autocommit = True
        con.cursor().execute("CREATE DATABASE %s" % name)
        con.close()
        return "postgresql://postgres@/%s?host=%s" % (name, self.dir)

    def stop(self, mode="fast"):
        subprocess.run(self.as_user + [os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-m", mode, "-w", "stop"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)

    def restart(self):
        self._run([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-w", "-l", os.path.join(self.dir, "log"),
                   "-o", "-c listen_addresses='' -c unix_socket_directories=%s -c fsync=off" % self.dir, "start"])

    def close(self):
        self.stop("immediate")
        time.sleep(0.2)
        shutil.rmtree(self.dir, ignore_errors=True)
