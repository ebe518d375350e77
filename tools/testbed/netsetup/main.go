// GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
// SPDX-License-Identifier: GPL-3.0-or-later

// Command gpuci-netsetup makes and removes the testbed real node's bridge
// through netlink, for hosts without the `ip` command (the lent GPU machine
// has none); tools/testbed/lib/node.py uses `ip` where it exists.
//
//	gpuci-netsetup add-bridge NAME ADDRESS/PREFIX [ADDRESS/PREFIX ...]
//	gpuci-netsetup del-link NAME
package main

import (
	"fmt"
	"os"

	"github.com/vishvananda/netlink"
)

func addBridge(name string, addresses []string) error {
	bridge := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: name}}
	if err := netlink.LinkAdd(bridge); err != nil {
		return fmt.Errorf("add bridge %s: %w", name, err)
	}
	for _, cidr := range addresses {
		addr, err := netlink.ParseAddr(cidr)
		if err != nil {
			return err
		}
		if err := netlink.AddrAdd(bridge, addr); err != nil {
			return fmt.Errorf("add %s to %s: %w", cidr, name, err)
		}
	}
	return netlink.LinkSetUp(bridge)
}

func delLink(name string) error {
	link, err := netlink.LinkByName(name)
	if err != nil {
		return nil // already gone
	}
	return netlink.LinkDel(link)
}

func main() {
	var err error
	switch {
	case len(os.Args) >= 3 && os.Args[1] == "add-bridge":
		err = addBridge(os.Args[2], os.Args[3:])
	case len(os.Args) == 3 && os.Args[1] == "del-link":
		err = delLink(os.Args[2])
	default:
		err = fmt.Errorf("usage: gpuci-netsetup add-bridge NAME ADDRESS/PREFIX... | del-link NAME")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gpuci-netsetup:", err)
		os.Exit(1)
	}
}
