// GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
// SPDX-License-Identifier: GPL-3.0-or-later

// Tests of the DRA kubelet plugin STAND-IN (test harness only): what it reads
// from the CDI spec, what it publishes, what it hands the kubelet.
package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
)

// The shape `nvidia-ctk cdi generate` writes (index and UUID names, GPU by
// GPU, then "all"); the second GPU's device node is minor 2, not 1.
const twoGPUs = `cdiVersion: 0.8.0
kind: nvidia.com/gpu
devices:
- name: "0"
  containerEdits: {deviceNodes: [{path: /dev/nvidia0}]}
- name: GPU-aaaa
  containerEdits: {deviceNodes: [{path: /dev/nvidia0}]}
- name: "1"
  containerEdits: {deviceNodes: [{path: /dev/nvidia2}]}
- name: GPU-bbbb
  containerEdits: {deviceNodes: [{path: /dev/nvidia2}]}
- name: all
  containerEdits: {deviceNodes: [{path: /dev/nvidia0}, {path: /dev/nvidia2}]}
`

func specDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestGPUsAreNamedByUUIDAndMinorWithTheSpecsIndex(t *testing.T) {
	gpus, err := gpusFromSpecs(specDir(t, map[string]string{"nvidia.yaml": twoGPUs}), "nvidia.com/gpu")
	if err != nil {
		t.Fatal(err)
	}
	want := []gpu{
		{Index: 0, Minor: 0, UUID: "GPU-aaaa", CDIID: "nvidia.com/gpu=GPU-aaaa"},
		{Index: 1, Minor: 2, UUID: "GPU-bbbb", CDIID: "nvidia.com/gpu=GPU-bbbb"},
	}
	if !reflect.DeepEqual(gpus, want) {
		t.Fatalf("got %+v, want %+v", gpus, want)
	}
	if deviceName(gpus[1]) != "gpu-2" {
		t.Fatalf("device name %s, want gpu-2 (NVIDIA's driver names a GPU by its minor)", deviceName(gpus[1]))
	}
}

func TestIndexNamesServeWhenNoSpecNamesAUUID(t *testing.T) {
	spec := "kind: nvidia.com/gpu\ndevices:\n- name: \"0\"\n  containerEdits: {deviceNodes: [{path: /dev/nvidia0}]}\n- name: all\n"
	other := "kind: example.com/other\ndevices:\n- name: GPU-cccc\n"
	gpus, err := gpusFromSpecs(specDir(t, map[string]string{"a.yaml": spec, "b.json.yaml": other, "c.txt": twoGPUs}), "nvidia.com/gpu")
	if err != nil {
		t.Fatal(err)
	}
	if len(gpus) != 1 || gpus[0].CDIID != "nvidia.com/gpu=0" || gpus[0].UUID != "" {
		t.Fatalf("got %+v", gpus)
	}
	if _, err := gpusFromSpecs(t.TempDir(), "nvidia.com/gpu"); err == nil {
		t.Fatal("an empty folder must be an error")
	}
}

func TestDriverVersionBecomesSemver(t *testing.T) {
	for in, want := range map[string]string{"580.159.04": "580.159.4", "550.54": "550.54.0", "0580.1.2": "580.1.2"} {
		if got, err := semver(in); err != nil || got != want {
			t.Errorf("semver(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "580.x", "1.2.3.4"} {
		if _, err := semver(in); err == nil {
			t.Errorf("semver(%q) must fail", in)
		}
	}
}

func TestDeviceCarriesNVIDIAsAttributeNames(t *testing.T) {
	d := device(gpu{Minor: 0, UUID: "GPU-aaaa"}, gpuFacts{ProductName: "NVIDIA H200", Brand: "Nvidia",
		Architecture: "Hopper", DriverVersion: "580.159.4", MemoryMiB: 143771})
	var names []string
	for name := range d.Attributes {
		names = append(names, string(name))
	}
	for _, name := range []string{"type", "uuid", "productName", "brand", "architecture", "driverVersion"} {
		if _, ok := d.Attributes[resourceapi.QualifiedName(name)]; !ok {
			t.Errorf("attribute %s missing (have %v)", name, names)
		}
	}
	if len(d.Attributes) != 6 || *d.Attributes["type"].StringValue != "gpu" || *d.Attributes["driverVersion"].VersionValue != "580.159.4" {
		t.Errorf("attributes %+v", d.Attributes)
	}
	if memory := d.Capacity["memory"].Value; memory.Value() != 143771*1024*1024 {
		t.Errorf("memory %s", memory.String())
	}
	if fake := device(gpu{Minor: 0}, gpuFacts{ProductName: "gpuci-FAKE-stand-in"}); fake.Capacity != nil {
		t.Errorf("no memory known, no capacity: %+v", fake.Capacity)
	}
}

func claim(uid, device, driver, pool string) *resourceapi.ResourceClaim {
	return &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c-" + uid, UID: types.UID(uid)},
		Status: resourceapi.ResourceClaimStatus{Allocation: &resourceapi.AllocationResult{
			Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{
				{Request: "gpu", Driver: driver, Pool: pool, Device: device},
				{Request: "nic", Driver: "example.com", Pool: pool, Device: "nic-0"},
			}},
		}},
	}
}

func TestPrepareHandsTheSpecsCDIIDsAndUnprepareForgetsThem(t *testing.T) {
	dir := t.TempDir()
	newPlugin := func() *plugin {
		p := &plugin{pool: "real-0", cdiIDs: map[string]string{"gpu-0": "nvidia.com/gpu=GPU-aaaa"},
			stateFile: filepath.Join(dir, stateFileName), fail: func(error) {}}
		if err := p.load(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := newPlugin()
	ctx := context.Background()
	results, err := p.PrepareResourceClaims(ctx, []*resourceapi.ResourceClaim{
		claim("u1", "gpu-0", driverName, "real-0"),
		claim("u2", "gpu-0", driverName, "real-0"), // the same GPU: refused
		claim("u3", "gpu-0", driverName, "gpu-l40s-0"),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []kubeletplugin.Device{{Requests: []string{"gpu"}, PoolName: "real-0", DeviceName: "gpu-0",
		CDIDeviceIDs: []string{"nvidia.com/gpu=GPU-aaaa"}}}
	if got := results["u1"]; got.Err != nil || !reflect.DeepEqual(got.Devices, want) {
		t.Fatalf("u1: %+v", got)
	}
	if results["u2"].Err == nil {
		t.Fatal("a device prepared for u1 must not be prepared for u2")
	}
	if got := results["u3"]; got.Err != nil || len(got.Devices) != 0 {
		t.Fatalf("another pool's devices are not ours: %+v", got)
	}
	// A restarted plugin answers the same and can release the claim.
	p = newPlugin()
	if again, _ := p.PrepareResourceClaims(ctx, []*resourceapi.ResourceClaim{claim("u1", "gpu-0", driverName, "real-0")}); !reflect.DeepEqual(again["u1"].Devices, want) {
		t.Fatalf("prepare again: %+v", again["u1"])
	}
	released, err := p.UnprepareResourceClaims(ctx, []kubeletplugin.NamespacedObject{
		{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "c-u1"}, UID: "u1"},
		{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "never"}, UID: "u9"},
	})
	if err != nil || len(released) != 2 || released["u1"] != nil || released["u9"] != nil {
		t.Fatalf("unprepare: %v %v", released, err)
	}
	if p = newPlugin(); len(p.prepared) != 1 { // u3 (no device of ours) stays until the kubelet unprepares it
		t.Fatalf("state after unprepare: %+v", p.prepared)
	}
}
