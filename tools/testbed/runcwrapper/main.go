// GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
// SPDX-License-Identifier: GPL-3.0-or-later

// Command gpuci-runc-wrapper is a TEST-HARNESS WORKAROUND, never part of what
// users run: it runs runc on VMs whose capability bounding set lacks
// CAP_SYS_RESOURCE (these CI VMs). The testbed's real node and the Docker
// tier's private engine put it in front of runc only there. Two things fail
// on such a VM that work on any ordinary host:
//
//   - a privileged container asks for every capability, and runc cannot grant
//     CAP_SYS_RESOURCE ("unable to apply caps: operation not permitted");
//   - kubelet gives pod sandboxes oom_score_adj -998, and lowering a process's
//     score below its parent's needs CAP_SYS_RESOURCE ("can't get final
//     child's PID from pipe: EOF").
//
// So before it execs the real runc it drops CAP_SYS_RESOURCE from the
// container's (create, run) or the exec'd process's (exec --process)
// capability sets and raises oomScoreAdj to its own score. Nothing else in
// the file changes: every other field is written back byte for byte.
//
// It is Go, not Python, because it runs on every runc call: an exec probe of
// every pod on the real node, several calls for each container, thousands in
// one `make test`. Python's start-up and imports took about 45 ms a call here,
// this binary's about 2 ms.
//
//	gpuci-runc-wrapper --runc /path/to/runc [runc arguments...]
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

const capability = "CAP_SYS_RESOURCE"

func main() {
	if len(os.Args) < 3 || os.Args[1] != "--runc" {
		fail("usage: gpuci-runc-wrapper --runc /path/to/runc [runc arguments...]")
	}
	runc, args := os.Args[2], os.Args[3:]
	floor, err := ownOOMScoreAdj()
	if err != nil {
		fail(err.Error())
	}
	for _, path := range specFiles(args) {
		if err := rewrite(path, floor); err != nil {
			fail(fmt.Sprintf("%s: %v", path, err))
		}
	}
	if err := syscall.Exec(runc, append([]string{runc}, args...), os.Environ()); err != nil {
		fail(fmt.Sprintf("exec %s: %v", runc, err))
	}
}

func fail(message string) {
	fmt.Fprintln(os.Stderr, "gpuci-runc-wrapper:", message)
	os.Exit(1)
}

func ownOOMScoreAdj() (int, error) {
	raw, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(raw)))
}

// specFiles names the JSON files runc is about to read: the bundle's
// config.json for create and run, the --process file for exec. The words are
// looked for among every argument that is not an option, so a value that
// happens to be one of them only makes a file be read that needs no change.
func specFiles(args []string) []string {
	words := map[string]bool{}
	for _, arg := range args {
		if !strings.HasPrefix(arg, "-") {
			words[arg] = true
		}
	}
	switch {
	case words["create"] || words["run"]:
		bundle, ok := option(args, "--bundle", "-b")
		if !ok {
			bundle, _ = os.Getwd()
		}
		return []string{filepath.Join(bundle, "config.json")}
	case words["exec"]:
		if process, ok := option(args, "--process", "-p"); ok {
			return []string{process}
		}
	}
	return nil
}

// option is the value of a runc option given as `--name value` or `--name=value`.
func option(args []string, names ...string) (string, bool) {
	for i, arg := range args {
		for _, name := range names {
			if arg == name && i+1 < len(args) {
				return args[i+1], true
			}
			if strings.HasPrefix(arg, name+"=") {
				return arg[len(name)+1:], true
			}
		}
	}
	return "", false
}

// rewrite changes the file only where the VM cannot grant what it asks; a
// file that is not there is left to runc to report.
func rewrite(path string, floor int) error {
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var spec map[string]json.RawMessage
	if err := json.Unmarshal(raw, &spec); err != nil {
		return err
	}
	_, isBundle := spec["ociVersion"]
	if process, ok := spec["process"]; ok || isBundle {
		// A bundle's config.json: the container's process is one field of it.
		if !ok || bytes.Equal(process, []byte("null")) {
			return nil
		}
		relaxed, changed, err := relax(process, floor)
		if err != nil || !changed {
			return err
		}
		spec["process"] = relaxed
		out, err := json.Marshal(spec)
		if err != nil {
			return err
		}
		return os.WriteFile(path, out, 0o600)
	}
	// An exec --process file is the process object itself.
	relaxed, changed, err := relax(raw, floor)
	if err != nil || !changed {
		return err
	}
	return os.WriteFile(path, relaxed, 0o600)
}

// relax returns the OCI process without CAP_SYS_RESOURCE and with an
// oomScoreAdj no lower than floor, and whether that changed anything.
func relax(raw json.RawMessage, floor int) (json.RawMessage, bool, error) {
	var process map[string]json.RawMessage
	if err := json.Unmarshal(raw, &process); err != nil {
		return nil, false, err
	}
	changed := false
	if sets, ok := process["capabilities"]; ok && !bytes.Equal(sets, []byte("null")) {
		var capabilities map[string][]string
		if err := json.Unmarshal(sets, &capabilities); err != nil {
			return nil, false, err
		}
		for name, caps := range capabilities {
			kept := caps[:0:0]
			for _, c := range caps {
				if c != capability {
					kept = append(kept, c)
				}
			}
			if len(kept) != len(caps) {
				capabilities[name], changed = kept, true
			}
		}
		if changed {
			encoded, err := json.Marshal(capabilities)
			if err != nil {
				return nil, false, err
			}
			process["capabilities"] = encoded
		}
	}
	if score, ok := process["oomScoreAdj"]; ok && !bytes.Equal(score, []byte("null")) {
		var adj int
		if err := json.Unmarshal(score, &adj); err != nil {
			return nil, false, err
		}
		if adj < floor {
			process["oomScoreAdj"], changed = json.RawMessage(strconv.Itoa(floor)), true
		}
	}
	if !changed {
		return raw, false, nil
	}
	relaxed, err := json.Marshal(process)
	return relaxed, true, err
}
