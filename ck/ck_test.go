package ck_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/ck"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// copyTree copies testdata/ck into a temp prefix the test may damage.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "prefix")
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func ckRules(rep *ck.Report) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, f.Rule+":"+f.Library)
	}
	sort.Strings(out)
	return out
}

func checkCK(t *testing.T, prefix string, opts ck.Options) *ck.Report {
	t.Helper()
	rep, err := ck.Check(prefix, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

const cmakeDir = "lib/cmake/composable_kernel"

func TestCKCompleteInstall(t *testing.T) {
	prefix := copyTree(t, testenv.Testdata("ck"))
	rep := checkCK(t, prefix, ck.Options{Preset: "miopen-6.2", Consumers: nil})
	if len(rep.Findings) != 0 {
		t.Fatalf("complete install: %v", ckRules(rep))
	}
	if len(rep.Components) != 5 {
		t.Errorf("components = %+v", rep.Components)
	}
	for _, c := range rep.Components {
		if !c.Present || len(c.Targets) != 1 || c.Targets[0].Instances != 1 || c.Targets[0].Kind != "archive" {
			t.Errorf("%s: %+v", c.Name, c)
		}
	}
	if strings.Join(rep.GPUTargets, " ") != "gfx1030 gfx906:sramecc+:xnack- gfx90a:xnack-" {
		t.Errorf("GPU targets = %v", rep.GPUTargets)
	}
	// The preset for 6.3 also asks for mha, which this install lacks: optional.
	rep = checkCK(t, prefix, ck.Options{Preset: "miopen-6.3"})
	if got := ckRules(rep); len(got) != 1 || got[0] != "ck-component-missing:device_mha_operations" || rep.Findings[0].Severity != finding.SeverityWarning {
		t.Errorf("6.3: %v", got)
	}
}

func TestCKMissingComponents(t *testing.T) {
	prefix := copyTree(t, testenv.Testdata("ck"))
	for _, c := range []string{"device_conv_operations", "device_contraction_operations"} {
		m, _ := filepath.Glob(filepath.Join(prefix, cmakeDir, "composable_kernel"+c+"Targets*.cmake"))
		for _, p := range m {
			os.Remove(p)
		}
	}
	rep := checkCK(t, prefix, ck.Options{Require: []string{"device_conv_operations", "device_contraction_operations", "device_gemm_operations"}})
	got := ckRules(rep)
	want := []string{"ck-component-missing:device_contraction_operations", "ck-component-missing:device_conv_operations"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("findings = %v, want %v", got, want)
	}
	m := rep.Findings[0].Message
	for _, s := range []string{"include could not find requested file", "Likely cause:", "gfx90a:xnack-"} {
		if !strings.Contains(m, s) {
			t.Errorf("message lacks %q: %s", s, m)
		}
	}
	if !strings.Contains(rep.Findings[0].Fix, "-DGPU_TARGETS=") || !strings.Contains(rep.Findings[0].Fix, "INSTANCES_ONLY=OFF") {
		t.Errorf("fix = %s", rep.Findings[0].Fix)
	}
	if len(rep.CMakeErrors) != 2 {
		t.Errorf("cmake errors = %q", rep.CMakeErrors)
	}
}

func TestCKDanglingLocationAndEmptyArchive(t *testing.T) {
	prefix := copyTree(t, testenv.Testdata("ck"))
	os.Remove(filepath.Join(prefix, "lib", "libdevice_gemm_operations.a"))
	os.WriteFile(filepath.Join(prefix, "lib", "libdevice_reduction_operations.a"), []byte("!<arch>\n"), 0o644)
	os.WriteFile(filepath.Join(prefix, "lib", "libdevice_other_operations.a"), []byte("not an archive"), 0o644)
	rep := checkCK(t, prefix, ck.Options{Preset: "miopen-6.2"})
	got := strings.Join(ckRules(rep), " ")
	for _, want := range []string{"ck-bad-imported-location:composable_kernel::device_gemm_operations",
		"ck-bad-imported-location:composable_kernel::device_other_operations", "ck-no-instances:device_reduction_operations"} {
		if !strings.Contains(got, want) {
			t.Errorf("findings %s lack %s", got, want)
		}
	}
}

func TestCKConsumer(t *testing.T) {
	prefix := copyTree(t, testenv.Testdata("ck"))
	rep := checkCK(t, prefix, ck.Options{Preset: "miopen-6.2", Consumers: []string{testenv.Testdata("ck", "consumer.o")}})
	if len(rep.Findings) != 1 {
		t.Fatalf("findings = %v", ckRules(rep))
	}
	f := rep.Findings[0]
	if f.Rule != finding.RuleCKMissingInstance || f.Library != "device_conv_operations" ||
		!strings.Contains(f.Message, "ck::tensor_operation::device::instance::add_device_grouped_conv3d_bwd_weight_xdl_ndhwgc_gkzyxc_ndhwgk_bf16_instances") {
		t.Errorf("finding = %+v", f)
	}
}

func TestCKMissingLinkTargetAndPre61Layout(t *testing.T) {
	prefix := copyTree(t, testenv.Testdata("ck"))
	tf := filepath.Join(prefix, cmakeDir, "composable_kerneldevice_conv_operationsTargets.cmake")
	b, _ := os.ReadFile(tf)
	s := strings.Replace(string(b), "add_library(composable_kernel::device_conv_operations STATIC IMPORTED)",
		"add_library(composable_kernel::device_conv_operations STATIC IMPORTED)\nset_target_properties(composable_kernel::device_conv_operations PROPERTIES INTERFACE_LINK_LIBRARIES \"$<LINK_ONLY:composable_kernel::utility>;hip::device\")", 1)
	os.WriteFile(tf, []byte(s), 0o644)
	rep := checkCK(t, prefix, ck.Options{Require: []string{"device_conv_operations"}})
	if got := ckRules(rep); len(got) != 1 || got[0] != "ck-missing-link-target:composable_kernel::utility" {
		t.Errorf("without utility: %v", got)
	}
	if rep = checkCK(t, prefix, ck.Options{Require: []string{"device_conv_operations", "utility"}}); len(rep.Findings) != 0 {
		t.Errorf("with utility requested: %v", ckRules(rep))
	}
	// ROCm ≤ 6.0: a single device_operations component.
	old := t.TempDir()
	dir := filepath.Join(old, cmakeDir)
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "composable_kernelConfig.cmake"), []byte(`
set(_composable_kernel_supported_components device_operations utility)
foreach(_comp ${composable_kernel_FIND_COMPONENTS})
  if(NOT _comp IN_LIST _composable_kernel_supported_components)
    set(composable_kernel_FOUND False)
  endif()
  include("${CMAKE_CURRENT_LIST_DIR}/composable_kernel${_comp}Targets.cmake")
endforeach()
`), 0o644)
	rep = checkCK(t, old, ck.Options{Preset: "miopen-6.0"})
	if got := ckRules(rep); len(got) != 1 || got[0] != "ck-component-missing:device_operations" {
		t.Errorf("pre-6.1: %v", got)
	}
	// The 6.2 preset against the 6.0 layout: components not advertised.
	rep = checkCK(t, old, ck.Options{Preset: "miopen-6.2"})
	if len(rep.Findings) != 5 || !strings.Contains(rep.Findings[0].Message, "is not among the components") {
		t.Errorf("6.2 preset on 6.0 layout: %v", ckRules(rep))
	}
}

// TestCKAgreesWithCMake is the CI tier's oracle: build and install the
// miniature CK with a real cmake, then for several damaged installs ask a
// consumer's find_package(composable_kernel COMPONENTS …) and require that
// cmake fails exactly when rocmdoctor reports an error.
func TestCKAgreesWithCMake(t *testing.T) {
	cmake := testenv.Tool(t, "cmake", "cmake")
	testenv.Tool(t, "g++", "g++")
	work := t.TempDir()
	src := testenv.Testdata("src", "ck")
	run := func(dir string, args ...string) ([]byte, error) {
		cmd := exec.Command(cmake, args...)
		cmd.Dir = dir
		return cmd.CombinedOutput()
	}
	builds := map[string]string{}
	for _, variant := range []string{"plain", "linkutil"} {
		build := filepath.Join(work, "build-"+variant)
		args := []string{"-S", src, "-B", build, "-DCMAKE_BUILD_TYPE=Release"}
		if variant == "linkutil" {
			args = append(args, "-DCK_LINK_UTILITY=ON")
		}
		if out, err := run(work, args...); err != nil {
			t.Fatalf("configure: %v\n%s", err, out)
		}
		if out, err := run(work, "--build", build); err != nil {
			t.Fatalf("build: %v\n%s", err, out)
		}
		builds[variant] = build
	}
	comps := []string{"device_other_operations", "device_gemm_operations", "device_conv_operations", "device_contraction_operations", "device_reduction_operations"}
	consumer := filepath.Join(work, "consumer")
	os.MkdirAll(consumer, 0o755)
	os.WriteFile(filepath.Join(consumer, "CMakeLists.txt"), []byte("cmake_minimum_required(VERSION 3.16)\nproject(consumer NONE)\n"+
		"find_package(composable_kernel REQUIRED COMPONENTS "+strings.Join(comps, " ")+")\n"), 0o644)
	scenarios := map[string]func(prefix string){
		"complete": func(string) {},
		"no conv": func(p string) {
			m, _ := filepath.Glob(filepath.Join(p, cmakeDir, "composable_kerneldevice_conv_operationsTargets*.cmake"))
			for _, f := range m {
				os.Remove(f)
			}
		},
		"no contraction targets file only": func(p string) {
			os.Remove(filepath.Join(p, cmakeDir, "composable_kerneldevice_contraction_operationsTargets.cmake"))
		},
		"dangling location": func(p string) { os.Remove(filepath.Join(p, "lib", "libdevice_gemm_operations.a")) },
		// Device libraries that link composable_kernel::utility, which the
		// consumer does not request: cmake's generated check fails.
		"missing link target": func(string) {},
	}
	agree := 0
	for name, damage := range scenarios {
		t.Run(name, func(t *testing.T) {
			prefix := filepath.Join(work, "inst-"+strings.ReplaceAll(name, " ", "-"))
			build := builds["plain"]
			if name == "missing link target" {
				build = builds["linkutil"]
			}
			if out, err := run(work, "--install", build, "--prefix", prefix); err != nil {
				t.Fatalf("install: %v\n%s", err, out)
			}
			damage(prefix)
			out, cmErr := run(consumer, "-S", consumer, "-B", filepath.Join(work, "cb-"+strings.ReplaceAll(name, " ", "-")), "-DCMAKE_PREFIX_PATH="+prefix)
			rep := checkCK(t, prefix, ck.Options{Require: comps})
			errs := 0
			for _, f := range rep.Findings {
				if f.Severity == finding.SeverityError {
					errs++
				}
			}
			if (cmErr != nil) != (errs > 0) {
				t.Errorf("cmake failed=%v, rocmdoctor errors=%v\ncmake:\n%s\nrocmdoctor: %v", cmErr != nil, ckRules(rep), out, ckRules(rep))
			} else {
				agree++
			}
		})
	}
	t.Logf("rocmdoctor ck agrees with cmake's find_package on %d of %d installs", agree, len(scenarios))
}

// TestCKConfigThatAdvertisesNothing: a config with no component list and
// no components asked for is a finding (there would be nothing else to
// check), without the GPU-target explanation of missing components; a
// binary or huge file given as the config is refused.
func TestCKConfigThatAdvertisesNothing(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "lib", "cmake", "composable_kernel", "composable_kernelConfig.cmake")
	os.MkdirAll(filepath.Dir(cfg), 0o755)
	if err := os.WriteFile(cfg, []byte("# nothing here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := ck.Check(dir, ck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 || rep.Findings[0].Rule != finding.RuleCKComponentMissing || rep.Findings[0].Severity != finding.SeverityError ||
		!strings.Contains(rep.Findings[0].Message, "advertises no components") || strings.Contains(rep.Findings[0].Message, "Likely cause") {
		t.Errorf("findings %+v", rep.Findings)
	}
	// Asked for a component, the component's own finding says it.
	rep, err = ck.Check(dir, ck.Options{Require: []string{"device_gemm_operations"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if strings.Contains(f.Message, "advertises no components") {
			t.Errorf("with --require: %+v", f)
		}
	}
}

// Each component and target says what is wrong with it, and the cause
// names only what the archives' GPU targets show.
func TestCKStatusAndCause(t *testing.T) {
	rep, err := ck.Check(testenv.Testdata("checktree", "ck"), ck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range rep.Components {
		st := c.Status
		for _, tg := range c.Targets {
			if tg.Status != "ok" {
				st = tg.Status
			}
		}
		got[c.Name] = st
	}
	want := map[string]string{"device_other_operations": "ok", "device_gemm_operations": "location missing", "device_conv_operations": "ok",
		"device_mha_operations": "missing", "device_contraction_operations": "missing", "device_reduction_operations": "no instances", "utility": "ok"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: status %q, want %q", k, got[k], v)
		}
	}
	for _, f := range rep.Findings {
		if strings.Contains(f.Message, "Likely cause") && (strings.Contains(f.Message, "WMMA") || strings.Contains(f.Message, "INSTANCES_ONLY")) {
			t.Errorf("a cause the targets (gfx90a has XDL) do not show: %s", f.Message)
		}
	}
}
