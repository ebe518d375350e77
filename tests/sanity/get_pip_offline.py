# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Stand-in for ansible-test's pip bootstrap script on machines without internet.

ansible-test downloads get-pip.py from a host CI cannot reach. This script does
the same job from what the machine has: ensurepip (bundled with Python) puts
pip into the fresh virtual environment, then pip installs the pinned packages
ansible-test asked for (from PyPI, which CI reaches). tests/sanity/run.sh
copies it into ansible-test's cache under the name ansible-test looks for.
"""
import subprocess
import sys

if __name__ == "__main__":
    subprocess.check_call([sys.executable, "-m", "ensurepip", "--default-pip"], stdout=subprocess.DEVNULL)
    args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
    sys.exit(subprocess.call([sys.executable, "-m", "pip", "install", *args]))
