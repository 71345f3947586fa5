"""Holds RUN/lock the way a running kforge-tune does while running a command: hold_lock.py LOCKFILE CMD...
Prints the command's exit status. Both lock kinds are taken (fcntl record lock and flock), so the test does not
depend on which one llvm::sys::fs::tryLockFile uses."""
import fcntl
import subprocess
import sys

with open(sys.argv[1], "a") as lock:
    fcntl.lockf(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    rc = subprocess.run(sys.argv[2:]).returncode
print("exit %d" % rc)
