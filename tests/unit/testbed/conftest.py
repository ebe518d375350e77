# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests of the testbed's own tools (tools/testbed): importable as `lib.*` and modules."""
import sys
from pathlib import Path

TESTBED = Path(__file__).resolve().parents[3] / "tools" / "testbed"
if str(TESTBED) not in sys.path:
    sys.path.insert(0, str(TESTBED))
