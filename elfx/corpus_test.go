package elfx_test

// The CI tier's differential test: elfx must agree with binutils' readelf
// and nm on every ELF file of a real system (Debian's ROCm and LLVM packages
// included) and on every member of LLVM's static archives.

import (
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

const sysLib = "/usr/lib/x86_64-linux-gnu"

// Files the CI tier installs; their absence is a failure there.
var corpusRequired = map[string]string{
	sysLib + "/libamdhip64.so.5":               "libamdhip64-5",
	sysLib + "/libhsa-runtime64.so.1":          "libhsa-runtime64-1",
	sysLib + "/libamd_comgr.so.2":              "libamd-comgr2",
	sysLib + "/libLLVM-15.so.1":                "libllvm15",
	sysLib + "/librocsparse.so.0":              "librocsparse0",
	"/usr/lib/llvm-15/lib/libLLVMX86CodeGen.a": "llvm-15-dev",
}

func run(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).Output()
	return string(out), err
}

var dynLine = regexp.MustCompile(`\((NEEDED|SONAME|RPATH|RUNPATH)\)\s+[^\[]*\[(.*)\]$`)

// readelfDynamic returns "TAG value" lines from readelf -dW.
func readelfDynamic(path string) ([]string, error) {
	out, err := run("readelf", "-dW", path)
	if err != nil {
		return nil, err
	}
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if m := dynLine.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			got = append(got, m[1]+" "+m[2])
		}
	}
	return got, nil
}

func ourDynamic(f *elfx.File) ([]string, error) {
	d, err := f.Dynamic()
	if err != nil {
		return nil, nil // readelf prints nothing either
	}
	var got []string
	for _, e := range d.Entries {
		var tag string
		switch e.Tag {
		case elf.DT_NEEDED:
			tag = "NEEDED"
		case elf.DT_SONAME:
			tag = "SONAME"
		case elf.DT_RPATH:
			tag = "RPATH"
		case elf.DT_RUNPATH:
			tag = "RUNPATH"
		default:
			continue
		}
		s, _ := d.String(e.Value)
		got = append(got, tag+" "+s)
	}
	return got, nil
}

// nmSymbols returns "name state" entries from nm output lines
// "[addr] L name"; state is U (undefined), W (weak undefined), D (defined)
// or WD (weak defined).
func nmSymbols(out string) []string {
	var got []string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		name, letter := f[len(f)-1], f[len(f)-2]
		got = append(got, name+" "+nmState(letter))
	}
	sort.Strings(got)
	return got
}

func nmState(letter string) string {
	switch letter {
	case "U":
		return "U"
	case "w", "v":
		return "W"
	case "W", "V":
		return "WD"
	}
	return "D"
}

func ourState(s elfx.Symbol) string {
	switch {
	case !s.Defined() && s.Weak():
		return "W"
	case !s.Defined():
		return "U"
	case s.Weak() && s.Type != elf.STT_GNU_IFUNC:
		return "WD"
	}
	return "D"
}

var verNeedFile = regexp.MustCompile(`Version: \d+\s+File: (\S+)`)
var verNeedName = regexp.MustCompile(`^\s*0x[0-9a-f]+:\s+Name: (\S+)\s+Flags`)

// readelfVersionNeeds returns "file:version" from readelf -VW.
func readelfVersionNeeds(path string) ([]string, error) {
	out, err := run("readelf", "-VW", path)
	if err != nil {
		return nil, err
	}
	var got []string
	in, file := false, ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Version needs section") {
			in = true
			continue
		}
		if strings.HasPrefix(l, "Version") && !strings.HasPrefix(l, "Version needs") {
			in = false
		}
		if !in {
			continue
		}
		if m := verNeedFile.FindStringSubmatch(l); m != nil {
			file = m[1]
		} else if m := verNeedName.FindStringSubmatch(l); m != nil {
			got = append(got, file+":"+m[1])
		}
	}
	sort.Strings(got)
	return got, nil
}

func diffSets(want, got []string) string {
	w := map[string]int{}
	for _, x := range want {
		w[x]++
	}
	for _, x := range got {
		w[x]--
	}
	var missing, extra []string
	for k, n := range w {
		for ; n > 0; n-- {
			missing = append(missing, k)
		}
		for ; n < 0; n++ {
			extra = append(extra, k)
		}
	}
	if len(missing) == 0 && len(extra) == 0 {
		return ""
	}
	sort.Strings(missing)
	sort.Strings(extra)
	trim := func(xs []string) []string {
		if len(xs) > 5 {
			return append(xs[:5:5], fmt.Sprintf("… %d more", len(xs)-5))
		}
		return xs
	}
	return fmt.Sprintf("binutils only: %q; elfx only: %q", trim(missing), trim(extra))
}

func compareELF(path string) error {
	f, err := elfx.Open(path)
	if err != nil {
		return fmt.Errorf("elfx: %v", err)
	}
	defer f.Close()
	wantDyn, err := readelfDynamic(path)
	if err != nil {
		return fmt.Errorf("readelf -d: %v", err)
	}
	gotDyn, _ := ourDynamic(f)
	if strings.Join(wantDyn, "\n") != strings.Join(gotDyn, "\n") {
		return fmt.Errorf("dynamic section: readelf %q, elfx %q", wantDyn, gotDyn)
	}
	if f.ELF().SectionByType(elf.SHT_DYNSYM) != nil {
		out, err := run("nm", "-D", path)
		if err != nil {
			return fmt.Errorf("nm -D: %v", err)
		}
		syms, err := f.DynamicSymbols()
		if err != nil {
			return fmt.Errorf("elfx symbols: %v", err)
		}
		var got []string
		for _, s := range syms {
			if s.Name == "" || s.Type == elf.STT_SECTION || s.Type == elf.STT_FILE {
				continue
			}
			got = append(got, s.VersionedName()+" "+ourState(s))
		}
		sort.Strings(got)
		if d := diffSets(nmSymbols(out), got); d != "" {
			return fmt.Errorf("dynamic symbols: %s", d)
		}
	}
	wantV, err := readelfVersionNeeds(path)
	if err != nil {
		return fmt.Errorf("readelf -V: %v", err)
	}
	needs, err := f.VersionNeeds()
	if err != nil {
		return fmt.Errorf("elfx version needs: %v", err)
	}
	var gotV []string
	for _, n := range needs {
		for _, v := range n.Versions {
			gotV = append(gotV, n.File+":"+v.Name)
		}
	}
	sort.Strings(gotV)
	if d := diffSets(wantV, gotV); d != "" {
		return fmt.Errorf("version requirements: %s", d)
	}
	return nil
}

func parallel(paths []string, fn func(string) error) map[string]error {
	var mu sync.Mutex
	fails := map[string]error{}
	ch := make(chan string)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range ch {
				if err := fn(p); err != nil {
					mu.Lock()
					fails[p] = err
					mu.Unlock()
				}
			}
		}()
	}
	for _, p := range paths {
		ch <- p
	}
	close(ch)
	wg.Wait()
	return fails
}

func TestCorpusAgreesWithBinutils(t *testing.T) {
	testenv.Corpus(t)
	testenv.Tool(t, "readelf", "binutils")
	testenv.Tool(t, "nm", "binutils")
	for p, pkg := range corpusRequired {
		testenv.File(t, p, pkg)
	}
	// And the 32-bit libraries, objects and programs of /usr/lib32.
	lib32 := filepath.Dir(testenv.File(t, "/usr/lib32/libstdc++.so.6", "gcc-multilib"))
	for _, dir := range []string{sysLib, lib32} {
		files := testenv.ELFFiles(t, dir)
		fails := parallel(files, compareELF)
		for p, err := range fails {
			t.Errorf("%s: %v", p, err)
		}
		t.Logf("elfx agrees with readelf -d, readelf -V and nm -D on %d of %d ELF files under %s", len(files)-len(fails), len(files), dir)
	}
}

// readHead reads the first len(b) bytes of path into b.
func readHead(path string, b []byte) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = io.ReadFull(f, b)
	return err == nil
}

// nmArchive returns member → sorted "name state" of external symbols.
func nmArchive(path string) (map[string][]string, error) {
	out, err := run("nm", "-A", "-g", path)
	if err != nil {
		return nil, err
	}
	got := map[string][]string{}
	prefix := path + ":"
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, prefix) {
			continue
		}
		rest := l[len(prefix):]
		i := strings.Index(rest, ":")
		if i < 0 {
			continue
		}
		member := rest[:i]
		got[member] = append(got[member], nmSymbols(rest[i+1:])...)
	}
	return got, nil
}

func compareArchive(path string) error {
	want, err := nmArchive(path)
	if err != nil {
		return fmt.Errorf("nm -A -g: %v", err)
	}
	members, err := run("ar", "t", path)
	if err != nil {
		return fmt.Errorf("ar t: %v", err)
	}
	a, err := elfx.OpenArchive(path)
	if err != nil {
		return fmt.Errorf("elfx: %v", err)
	}
	defer a.Close()
	var names []string
	for _, m := range a.Members {
		names = append(names, m.Name)
	}
	if strings.Join(names, "\n") != strings.TrimSpace(members) {
		return fmt.Errorf("members differ from ar t")
	}
	for i, m := range a.Members {
		f, err := a.OpenELF(i)
		if err != nil {
			return fmt.Errorf("member %s: %v", m.Name, err)
		}
		syms, err := f.Symbols()
		if err != nil {
			return fmt.Errorf("member %s: %v", m.Name, err)
		}
		var got []string
		for _, s := range syms {
			if s.Bind == elf.STB_LOCAL || s.Type == elf.STT_SECTION || s.Type == elf.STT_FILE || s.Name == "" {
				continue
			}
			got = append(got, s.Name+" "+ourState(s))
		}
		sort.Strings(got)
		if d := diffSets(want[m.Name], got); d != "" {
			return fmt.Errorf("member %s: %s", m.Name, d)
		}
	}
	return nil
}

func TestCorpusArchivesAgreeWithNm(t *testing.T) {
	testenv.Corpus(t)
	testenv.Tool(t, "nm", "binutils")
	testenv.Tool(t, "ar", "binutils")
	// LLVM's, and the 32-bit C library's and GCC's of /usr/lib32.
	for _, dir := range []string{
		filepath.Dir(testenv.File(t, "/usr/lib/llvm-15/lib/libLLVMX86CodeGen.a", "llvm-15-dev")),
		filepath.Dir(testenv.File(t, "/usr/lib32/libc.a", "gcc-multilib")),
	} {
		var archives []string
		all, _ := filepath.Glob(filepath.Join(dir, "*.a"))
		for _, p := range all {
			// glibc's libmcheck.a is an ELF object under an archive's name.
			if b := make([]byte, 8); readHead(p, b) && (string(b) == "!<arch>\n" || string(b) == "!<thin>\n") {
				archives = append(archives, p)
			}
		}
		fails := parallel(archives, compareArchive)
		for p, err := range fails {
			t.Errorf("%s: %v", p, err)
		}
		t.Logf("elfx agrees with ar t and nm -A -g on %d of %d archives under %s", len(archives)-len(fails), len(archives), dir)
		if len(archives) < 10 {
			t.Errorf("only %d archives under %s", len(archives), dir)
		}
	}
}

// TestCorpusLLVMInitializers pins the facts of the LLVMInitialize* case: which LLVM archive
// defines which LLVMInitialize* symbol, read through the archive index.
func TestCorpusLLVMInitializers(t *testing.T) {
	testenv.Corpus(t)
	dir := filepath.Dir(testenv.File(t, "/usr/lib/llvm-15/lib/libLLVMX86CodeGen.a", "llvm-15-dev"))
	want := map[string]string{
		"LLVMInitializeX86TargetInfo":      "libLLVMX86Info.a",
		"LLVMInitializeX86Target":          "libLLVMX86CodeGen.a",
		"LLVMInitializeX86AsmPrinter":      "libLLVMX86CodeGen.a",
		"LLVMInitializeX86TargetMC":        "libLLVMX86Desc.a",
		"LLVMInitializeX86AsmParser":       "libLLVMX86AsmParser.a",
		"LLVMInitializeX86Disassembler":    "libLLVMX86Disassembler.a",
		"LLVMInitializeAMDGPUTargetInfo":   "libLLVMAMDGPUInfo.a",
		"LLVMInitializeAMDGPUTarget":       "libLLVMAMDGPUCodeGen.a",
		"LLVMInitializeAMDGPUTargetMC":     "libLLVMAMDGPUDesc.a",
		"LLVMInitializeAMDGPUAsmParser":    "libLLVMAMDGPUAsmParser.a",
		"LLVMInitializeAMDGPUDisassembler": "libLLVMAMDGPUDisassembler.a",
	}
	for sym, archive := range want {
		a, err := elfx.OpenArchive(filepath.Join(dir, archive))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, s := range a.Symbols {
			found = found || s.Name == sym
		}
		a.Close()
		if !found {
			t.Errorf("%s: index has no %s", archive, sym)
		}
	}
}

// TestCorpusRocsparseTargets checks the 1.3 GB library's device code: 111
// bundles, each with the seven targets Debian built.
func TestCorpusRocsparseTargets(t *testing.T) {
	testenv.Corpus(t)
	f, err := elfx.Open(testenv.File(t, sysLib+"/librocsparse.so.0", "librocsparse0"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cos, err := f.GPUCodeObjects()
	if err != nil {
		t.Fatal(err)
	}
	bundles := map[int]bool{}
	targets := map[string]int{}
	for _, c := range cos {
		bundles[c.Bundle] = true
		targets[c.TargetID]++
		if c.Target == nil || c.Target.TargetID() != c.TargetID {
			t.Errorf("bundle %d: id says %s, code object header says %v", c.Bundle, c.TargetID, c.Target)
		}
	}
	if len(bundles) != 111 {
		t.Errorf("%d bundles, want 111", len(bundles))
	}
	for _, id := range []string{"gfx803", "gfx900:xnack-", "gfx906:xnack-", "gfx908:xnack-", "gfx90a:xnack-", "gfx90a:xnack+", "gfx1030"} {
		if targets[id] != 111 {
			t.Errorf("%s in %d bundles, want 111", id, targets[id])
		}
	}
	h, err := elfx.Open(testenv.File(t, sysLib+"/libhsa-runtime64.so.1", "libhsa-runtime64-1"))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	raw, err := h.GPUCodeObjects()
	if err != nil || len(raw) != 29 {
		t.Errorf("libhsa-runtime64: %d raw images (%v), want 29", len(raw), err)
	}
	// Three of them are the finalizer's code object v1 blit kernels, whose
	// e_flags name no processor: their ISA notes say 7.0.0, 8.0.0, 9.0.0.
	var v1 []string
	for _, c := range raw {
		if c.Target == nil || c.Target.Processor == "none" {
			t.Errorf("libhsa-runtime64: raw image at 0x%x has no processor (%+v)", c.Offset, c.Target)
			continue
		}
		if c.Target.CodeObjectVersion == 1 {
			v1 = append(v1, c.TargetID)
		}
	}
	if sort.Strings(v1); strings.Join(v1, " ") != "gfx700 gfx800 gfx900" {
		t.Errorf("libhsa-runtime64: code object v1 images %v, want gfx700 gfx800 gfx900", v1)
	}
}
