package elfx_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

func ccob(t testing.TB, inner []byte, version, method uint16) []byte {
	t.Helper()
	b, err := testenv.CompressedBundle(inner, version, method)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCompressedBundles(t *testing.T) {
	inner := readFixture(t, "bundle.hipfb")
	plain, err := elfx.ParseOffloadBundle(bytes.NewReader(inner), 0, int64(len(inner)))
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range []uint16{0, 1} {
		for _, version := range []uint16{1, 2, 3} {
			b := ccob(t, inner, version, method)
			name := fmt.Sprintf("method %d v%d", method, version)
			// Padding after the bundle, as in a .hip_fatbin section.
			padded := append(append([]byte(nil), b...), make([]byte, 4096)...)
			got, err := elfx.ParseOffloadBundle(bytes.NewReader(padded), 0, int64(len(padded)))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !got.Compressed || got.CompressionMethod != []string{"zlib", "zstd"}[method] || got.FormatVersion != int(version) || got.UncompressedSize != int64(len(inner)) {
				t.Errorf("%s header: %+v", name, got)
			}
			if wantSize := int64(len(b)); version > 1 && got.Size != wantSize {
				t.Errorf("%s Size = %d, want %d", name, got.Size, wantSize)
			}
			if len(got.Entries) != len(plain.Entries) {
				t.Fatalf("%s: %d entries, want %d", name, len(got.Entries), len(plain.Entries))
			}
			for i, e := range got.Entries {
				p := plain.Entries[i]
				if e.ID != p.ID || e.Offset != p.Offset || e.Size != p.Size {
					t.Errorf("%s entry %d = %s@%d+%d, want %s@%d+%d", name, i, e.ID, e.Offset, e.Size, p.ID, p.Offset, p.Size)
				}
				if want := inner[p.Offset : p.Offset+min(64, p.Size)]; p.Size > 0 && !bytes.Equal(e.Head, want) {
					t.Errorf("%s entry %s: head differs from the uncompressed entry", name, e.ID)
				}
			}
		}
	}
	z := ccob(t, inner, 3, 7)
	got, err := elfx.ParseOffloadBundle(bytes.NewReader(z), 0, int64(len(z)))
	if err != nil {
		t.Fatal(err)
	}
	if got.CompressionMethod != "method 7" || len(got.Entries) != 0 || !strings.Contains(got.Note, "method 7") || !strings.Contains(got.Note, "clang-offload-bundler") {
		t.Errorf("unknown method: %+v", got)
	}
}

func TestCompressedBundleMalformed(t *testing.T) {
	inner := readFixture(t, "bundle.hipfb")
	good := ccob(t, inner, 2, 0)
	for _, tc := range []struct {
		name string
		edit func([]byte) []byte
		want string
	}{
		{"version", func(b []byte) []byte { b[4] = 9; return b }, "unknown format version 9"},
		{"total size", func(b []byte) []byte { binary.LittleEndian.PutUint32(b[8:], 1<<30); return b }, "total size"},
		{"payload cut", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[8:], uint32(len(b)/2))
			return b[:len(b)/2]
		}, "truncated"},
		{"not zlib", func(b []byte) []byte { copy(b[24:], "garbage!"); return b }, "zlib"},
		{"header cut", func(b []byte) []byte { return b[:14] }, "header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.edit(append([]byte(nil), good...))
			_, err := elfx.ParseOffloadBundle(bytes.NewReader(b), 0, int64(len(b)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
	for n := 0; n < len(good); n += 5 {
		elfx.ParseOffloadBundle(bytes.NewReader(good[:n]), 0, int64(n)) // must not panic
	}
}

// A host library whose .hip_fatbin holds a zlib-compressed bundle lists the
// same targets as the uncompressed one, decoded from the code objects'
// headers inside the payload.
func TestGPUCodeObjectsCompressed(t *testing.T) {
	mod, secOff, err := testenv.CompressFatbin(readFixture(t, "libgpu.so"), 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	ef, _ := openTemp(t, "libgpuz.so", mod)
	cos, err := ef.GPUCodeObjects()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cos {
		if c.Container != "compressed-bundle" || c.Offset != secOff {
			t.Errorf("%s: container %s at 0x%x, want compressed-bundle at 0x%x", c.TargetID, c.Container, c.Offset, secOff)
		}
		if c.Target == nil || c.Target.TargetID() != c.TargetID {
			t.Errorf("%s: header target %v", c.TargetID, c.Target)
		}
		got = append(got, c.TargetID)
	}
	sort.Strings(got)
	if want := []string{"gfx1030", "gfx906:sramecc+:xnack-", "gfx90a:xnack-"}; !reflect.DeepEqual(got, want) {
		t.Errorf("targets = %v, want %v", got, want)
	}
}
