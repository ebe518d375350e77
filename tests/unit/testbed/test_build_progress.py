# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""with_progress (tools/testbed/lib/common.sh): the progress lines of a long build, its exit status kept,
and nothing left running once it returns (the build is not held until the ticker's next tick)."""
import subprocess

from lib.layout import TOOLS_DIR

SCRIPT = f"""
source {TOOLS_DIR / "lib" / "common.sh"}
PROGRESS_EVERY_S=0.2
with_progress "a build" sh -c 'sleep 1; exit 3' && echo "rc=0" || echo "rc=$?"
echo "children:"; ps -o args= --ppid $$ || true
"""


def test_a_long_build_reports_progress_keeps_its_status_and_leaves_nothing_running():
    done = subprocess.run(["bash", "-c", SCRIPT], capture_output=True, text=True, check=True, timeout=60)
    assert "rc=3" in done.stdout
    assert "still building a build (" in done.stderr
    children = done.stdout.split("children:\n", 1)[1].splitlines()
    assert [line for line in children if not line.startswith("ps ")] == [], done.stdout  # no ticker, no sleep
