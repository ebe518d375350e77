/* GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The pod sandbox's process for the testbed's real node. A sandbox only holds
 * the pod's namespaces open; this process sleeps until told to stop and reaps
 * any child handed to it (it is PID 1 of pods that share a PID namespace).
 * Built statically by tools/testbed/build-images.sh (no registry here serves
 * registry.k8s.io/pause).
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int sig) { (void)sig; _exit(0); }

static void reap(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  struct sigaction quit = {.sa_handler = stop};
  struct sigaction child = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP};
  sigaction(SIGINT, &quit, NULL);
  sigaction(SIGTERM, &quit, NULL);
  sigaction(SIGCHLD, &child, NULL);
  for (;;) pause();
  return 0;
}
