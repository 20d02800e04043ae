package inspect

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// InspectAll reads its paths on every core and returns what Inspect
// returns for each, in the order given (errors included).
func TestInspectAllKeepsOrder(t *testing.T) {
	var paths []string
	for _, name := range []string{"libfoo.so.1", "libgnu.a", "hello", "libi386.so", "k-gfx803.o", "libMIOpen.so", "bundle.hipfb", "libthin.a", "libgpu.so"} {
		paths = append(paths, testenv.Testdata(name))
	}
	paths = append(paths, filepath.Join(t.TempDir(), "missing.so"), testenv.Testdata("libraw.so"))
	for round := 0; round < 5; round++ {
		got := InspectAll(paths)
		if len(got) != len(paths) {
			t.Fatalf("%d reports for %d paths", len(got), len(paths))
		}
		for i, p := range paths {
			if want := Inspect(p); !reflect.DeepEqual(got[i], want) {
				t.Fatalf("report %d (%s) differs from Inspect's:\n%+v\nwant\n%+v", i, p, got[i], want)
			}
		}
	}
	if InspectAll(nil) == nil {
		// An empty result is still a slice (JSON: [] not null).
		t.Error("InspectAll(nil) is nil")
	}
}

// TestInspectKeepsHostSideOfDamagedDeviceCode: device code that cannot be
// read does not hide the rest of the report (inspect refused the whole
// file before); the report says what is wrong with it, naming the file
// and the offset, and so do its Problems.
func TestInspectKeepsHostSideOfDamagedDeviceCode(t *testing.T) {
	b, err := os.ReadFile(testenv.Testdata("libgpu.so"))
	if err != nil {
		t.Fatal(err)
	}
	c, s := testenv.DamagedFatbin(t)
	inspect := func(c []byte) *ELFReport {
		t.Helper()
		f, err := elfx.NewFileSize(bytes.NewReader(c), int64(len(c)), "fixture")
		if err != nil {
			t.Fatal(err)
		}
		r, err := InspectELF(f)
		if err != nil || r == nil {
			t.Fatalf("InspectELF = %v, %v; want a report", r, err)
		}
		return r
	}
	whole := inspect(b)
	if whole.DeviceCodeError != "" || len(whole.GPUTargets) == 0 {
		t.Fatalf("intact fixture: targets %v, error %q", whole.GPUTargets, whole.DeviceCodeError)
	}
	r := inspect(c)
	want := fmt.Sprintf("fixture: malformed file at offset 0x%x: .hip_fatbin: %d bytes without an offload bundle in them", s.Offset, s.Size)
	if r.DeviceCodeError != want || len(r.GPUTargets) != 0 {
		t.Errorf("damaged bundle: targets %v, error %q; want none and %q", r.GPUTargets, r.DeviceCodeError, want)
	}
	if r.Soname != whole.Soname || r.Symbols != whole.Symbols || r.Machine != whole.Machine || r.Soname == "" {
		t.Errorf("host side changed with the device code: %+v, intact %+v", r, whole)
	}
	rep := Report{Path: "fixture", Kind: "elf", ELF: r}
	if p := rep.Problems(); len(p) != 1 || p[0] != want {
		t.Errorf("Problems() = %q", p)
	}
	if p := (Report{ELF: whole}).Problems(); len(p) != 0 {
		t.Errorf("intact: Problems() = %q", p)
	}
}
