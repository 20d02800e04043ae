package elfx_test

import (
	"debug/elf"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// checkLookup verifies, for the copied and the memory-mapped table, that
// every defined dynamic symbol is found by a hashed lookup with the same
// version, and undefined ones are reported by Undefined.
func checkLookup(f *elfx.File) error {
	syms, err := f.DynamicSymbols()
	if err != nil {
		return err
	}
	for _, kind := range []struct {
		name string
		make func() (*elfx.SymbolTable, error)
	}{{"copied", f.CopiedSymbolTable}, {"read in one piece or mapped", f.DynamicSymbolTable}, {"mapped", func() (*elfx.SymbolTable, error) {
		f.MapAlways()
		return f.DynamicSymbolTable()
	}}} {
		t, err := kind.make()
		if err != nil {
			return fmt.Errorf("%s table: %w", kind.name, err)
		}
		if err := checkTable(t, syms); err != nil {
			return fmt.Errorf("%s table: %w", kind.name, err)
		}
	}
	return nil
}

func checkTable(t *elfx.SymbolTable, syms []elfx.Symbol) error {
	if got, want := t.Counts(), elfx.CountSymbols(syms); got != want {
		return fmt.Errorf("Counts() = %v, decoded symbols count %v", got, want)
	}
	undef := 0
	for _, s := range syms {
		if s.Name == "" {
			continue
		}
		if !s.Defined() {
			undef++
			continue
		}
		found := false
		for _, l := range t.Lookup(s.Name) {
			found = found || (l.Version == s.Version && l.HiddenVersion == s.HiddenVersion && l.Value == s.Value && l.Defined())
		}
		if !found {
			return fmt.Errorf("Lookup(%q) misses %s (got %+v)", s.Name, s.VersionedName(), t.Lookup(s.Name))
		}
	}
	if got := len(t.Undefined()); got != undef {
		return fmt.Errorf("Undefined() = %d symbols, want %d", got, undef)
	}
	// The transient walk gives the undefined symbols the section reader
	// lists, in table order, names viewing the table.
	var want []elfx.Symbol
	for _, s := range syms {
		if s.Name != "" && !s.Defined() {
			want = append(want, s)
		}
	}
	i := 0
	var bad error
	t.EachUndefinedTransient(func(s elfx.Symbol) bool {
		if i >= len(want) || s.Name != want[i].Name || s.Version != want[i].Version || s.Library != want[i].Library || s.Bind != want[i].Bind {
			bad = fmt.Errorf("EachUndefinedTransient's symbol %d = %+v, the section has %+v", i, s, want[min(i, len(want)-1)])
			return false
		}
		i++
		return true
	})
	if bad == nil && i != len(want) {
		bad = fmt.Errorf("EachUndefinedTransient gave %d symbols, the section has %d", i, len(want))
	}
	if bad != nil {
		return bad
	}
	if len(t.Lookup("no_such_symbol_anywhere")) != 0 {
		return fmt.Errorf("found a symbol that does not exist")
	}
	if err := checkBinds(t, syms); err != nil {
		return err
	}
	return t.Err()
}

// checkBinds: for every name in the table, and a reference to it with no
// version, each version the table has for it and one it does not, Binds
// says what the decoded symbols say: whether an exportable definition
// accepts the reference, and whether there is one at all.
func checkBinds(t *elfx.SymbolTable, syms []elfx.Symbol) error {
	byName := map[string][]elfx.Symbol{}
	for _, s := range syms {
		if s.Name != "" {
			byName[s.Name] = append(byName[s.Name], s)
		}
	}
	for name, ss := range byName {
		if err := checkBindsName(t, name, ss); err != nil {
			return err
		}
	}
	k := elfx.NewKey("no_such_symbol_anywhere")
	if b, d := t.Binds(&k, ""); b || d {
		return fmt.Errorf("Binds found a symbol that does not exist")
	}
	return nil
}

// checkBindsName: for references to name with no version, each version
// of defs (the table's symbols of that name) and one it does not have,
// Binds says what defs say: whether an exportable one accepts the
// reference, and whether there is one at all.
func checkBindsName(t *elfx.SymbolTable, name string, defs []elfx.Symbol) error {
	versions := []string{"", "NO_SUCH_VERSION_1.0"}
	for _, s := range defs {
		versions = append(versions, s.Version)
	}
	k := elfx.NewKey(name)
	for _, v := range versions {
		wantBinds, wantDefined := false, false
		for _, s := range defs {
			// ld.so does not search a table without buckets (or none).
			if t.Searched() && elfx.Exportable(s) {
				wantDefined = true
				wantBinds = wantBinds || elfx.Accepts(s, v, t.HasVersions())
			}
		}
		if b, d := t.Binds(&k, v); b != wantBinds || d != wantDefined {
			return fmt.Errorf("Binds(%q, %q) = %v, %v; the symbols say %v, %v", name, v, b, d, wantBinds, wantDefined)
		}
	}
	return nil
}

// TestAccepts pins glibc's check_match: which definitions satisfy a
// reference, by the reference's version and the definition's.
func TestAccepts(t *testing.T) {
	def := func(idx uint16, version string, hidden bool) elfx.Symbol {
		return elfx.Symbol{Name: "f", Value: 0x1100, Section: 12, Bind: elf.STB_GLOBAL, Type: elf.STT_FUNC, VersionIndex: idx, Version: version, HiddenVersion: hidden}
	}
	for _, c := range []struct {
		what      string
		s         elfx.Symbol
		version   string
		versioned bool
		want      bool
	}{
		{"unversioned object, versioned reference", def(0, "", false), "V1", false, true},
		{"global definition, unversioned reference", def(1, "", false), "", true, true},
		{"default version, unversioned reference", def(2, "V1", false), "", true, true},
		{"hidden first version, unversioned reference", def(2, "V1", true), "", true, true},
		{"hidden later version, unversioned reference", def(3, "V2", true), "", true, false},
		{"same version", def(2, "V1", true), "V1", true, true},
		{"other version", def(3, "V2", false), "V1", true, false},
		{"global definition, versioned reference", def(1, "", false), "V1", true, true},
		{"hidden global definition, versioned reference", def(1, "", true), "V1", true, false},
	} {
		if got := elfx.Accepts(c.s, c.version, c.versioned); got != c.want {
			t.Errorf("%s: Accepts = %v, want %v", c.what, got, c.want)
		}
	}
	for _, c := range []struct {
		what string
		s    elfx.Symbol
		want bool
	}{
		{"global function", def(1, "", false), true},
		{"undefined", elfx.Symbol{Section: elf.SHN_UNDEF, Bind: elf.STB_GLOBAL, Type: elf.STT_FUNC}, false},
		{"local", elfx.Symbol{Section: 12, Bind: elf.STB_LOCAL, Type: elf.STT_FUNC}, false},
		{"hidden", elfx.Symbol{Section: 12, Bind: elf.STB_GLOBAL, Type: elf.STT_FUNC, Visibility: elf.STV_HIDDEN}, false},
		{"protected", elfx.Symbol{Value: 0x4000, Section: 12, Bind: elf.STB_GLOBAL, Type: elf.STT_OBJECT, Visibility: elf.STV_PROTECTED}, true},
		{"weak TLS at offset 0", elfx.Symbol{Section: 12, Bind: elf.STB_WEAK, Type: elf.STT_TLS}, true},
		{"section symbol", elfx.Symbol{Value: 0x1000, Section: 12, Bind: elf.STB_GLOBAL, Type: elf.STT_SECTION}, false},
		{"IFUNC", elfx.Symbol{Value: 0x1100, Section: 12, Bind: elf.STB_GLOBAL, Type: elf.STT_GNU_IFUNC}, true},
		// check_match: st_value 0 is no value, unless absolute or TLS.
		{"function at 0", elfx.Symbol{Section: 12, Bind: elf.STB_GLOBAL, Type: elf.STT_FUNC}, false},
		{"absolute 0 (a version node's symbol)", elfx.Symbol{Section: elf.SHN_ABS, Bind: elf.STB_GLOBAL, Type: elf.STT_OBJECT}, true},
		// do_lookup_x binds global, weak and unique symbols; the reserved
		// bindings are skipped as local ones are.
		{"unique", elfx.Symbol{Value: 0x4000, Section: 12, Bind: 10, Type: elf.STT_OBJECT}, true},
		{"reserved binding", elfx.Symbol{Value: 0x1100, Section: 12, Bind: 3, Type: elf.STT_FUNC}, false},
	} {
		if got := elfx.Exportable(c.s); got != c.want {
			t.Errorf("%s: Exportable = %v, want %v", c.what, got, c.want)
		}
	}
}

func TestSymbolTableLookup(t *testing.T) {
	for _, name := range []string{"libfoo.so.1", "libi386.so", "libbe.so", "hello", "libMIOpen.so", "libgpu.so", "libsysv.so"} {
		t.Run(name, func(t *testing.T) {
			if err := checkLookup(open(t, name)); err != nil {
				t.Error(err)
			}
		})
	}
	// The hash styles: gcc/ld on Debian emit only .gnu.hash; lld for ppc64 both.
	f := open(t, "libfoo.so.1")
	if f.ELF().SectionByType(elf.SHT_GNU_HASH) == nil {
		t.Errorf("libfoo.so.1 has no .gnu.hash; the GNU path is untested")
	}
}

func TestCorpusSymbolTableLookup(t *testing.T) {
	testenv.Corpus(t)
	files := testenv.ELFFiles(t, sysLib)
	fails := parallel(files, func(p string) error {
		f, err := elfx.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		return checkLookup(f)
	})
	for p, err := range fails {
		t.Errorf("%s: %v", p, err)
	}
	t.Logf("hashed lookup finds every defined dynamic symbol in %d of %d files", len(files)-len(fails), len(files))
}

// A mapped table whose file is truncated under it (cp over a library in a
// build tree while check runs) must turn the SIGBUS into an error on the
// table, not kill the process.
func TestDynamicSymbolTableTruncated(t *testing.T) {
	f, path := openTemp(t, "libMIOpen.so", readFixture(t, "libMIOpen.so"))
	f.MapAlways()
	tab, err := f.DynamicSymbolTable()
	f.Close() // the mapping outlives the open file
	if err != nil {
		t.Fatal(err)
	}
	und := tab.Undefined()
	if len(und) == 0 || tab.Err() != nil {
		t.Fatalf("before truncation: %d undefined symbols, err %v", len(und), tab.Err())
	}
	if !tab.Mapped() {
		// Only where the host cannot map files (32-bit): the table is a
		// copy, which a truncation leaves intact.
		if testenv.MapsFiles(t) {
			t.Fatal("DynamicSymbolTable copied the tables on a host that maps files")
		}
		if err := os.Truncate(path, 0); err != nil {
			t.Fatal(err)
		}
		if got := tab.Undefined(); len(got) != len(und) || tab.Err() != nil {
			t.Fatalf("copied table after truncation: %d undefined symbols (want %d), err %v", len(got), len(und), tab.Err())
		}
		return
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	if got := tab.Undefined(); got != nil {
		t.Errorf("Undefined after truncation = %d symbols, want none", len(got))
	}
	err = tab.Err()
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "changed while it was being read") {
		t.Fatalf("Err after truncation = %v, want a fault naming %s", err, path)
	}
	if got := tab.Lookup(und[0].Name); got != nil {
		t.Errorf("Lookup after the fault = %v, want nothing", got)
	}
	// The guard restores the goroutine's fault mode on the way out, so
	// faults elsewhere in the program still crash as usual.
	if debug.SetPanicOnFault(false) {
		t.Error("panic-on-fault left enabled after a guarded table call")
	}
}

// TestGNUHash: the four-bytes-a-step hash is Bernstein's h*33+c from
// 5381, for every length (the tail after the last whole step included),
// and gives the values the GNU hash write-ups list.
func TestGNUHash(t *testing.T) {
	ref := func(s string) uint32 {
		h := uint32(5381)
		for i := 0; i < len(s); i++ {
			h = h*33 + uint32(s[i])
		}
		return h
	}
	for s, want := range map[string]uint32{"": 0x1505, "printf": 0x156b2bb8, "exit": 0x7c967e3f, "syscall": 0xbac212a0, "flapenguin.me": 0x8ae9f18e} {
		if got := elfx.GNUHash(s); got != want {
			t.Errorf("GNUHash(%q) = %#x, want %#x", s, got, want)
		}
	}
	b := make([]byte, 0, 80)
	for n := 0; n < 80; n++ {
		b = append(b, byte(0x80+n*37)) // bytes above 0x7f too
		for _, s := range []string{string(b), strings.Repeat("_ZN4llvm", n/8+1)[:n]} {
			if got, want := elfx.GNUHash(s), ref(s); got != want {
				t.Fatalf("GNUHash of %d bytes %q = %#x, want %#x", len(s), s, got, want)
			}
			if got, want := elfx.GNUHash([]byte(s)), ref(s); got != want {
				t.Fatalf("GNUHash([]byte) of %d bytes = %#x, want %#x", len(s), got, want)
			}
		}
	}
}
