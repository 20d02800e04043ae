package symcheck

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/config"
	"github.com/rocmdoctor/rocmdoctor/internal/regfile"
	"github.com/rocmdoctor/rocmdoctor/internal/safefile"
)

// ConfigFileNames are the configuration files Check looks for, in the
// order they are tried in each directory.
var ConfigFileNames = []string{".rocmdoctor.toml", ".rocmdoctor.yaml", ".rocmdoctor.yml"}

// FindConfig returns the nearest configuration file (see ConfigFileNames) in
// start's directory or its parents, or "" when there is none.
func FindConfig(start string) string {
	dir, err := filepath.Abs(start)
	if err != nil {
		return ""
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		dir = filepath.Dir(dir)
	}
	for {
		for _, name := range ConfigFileNames {
			p := filepath.Join(dir, name)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return p
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// LoadConfig reads a .rocmdoctor.toml (or the same settings as
// .rocmdoctor.yaml/.yml, see config.ParseYAML) into opts:
//
//	glibc = "2.28"            # baseline for RD1208
//	glibcxx = "3.4.25"        # baseline for RD1209
//	expect_runpath = true     # enable RD1204
//	dlopen_strings = true     # enable RD1010
//	gpu_targets = ["gfx90a", "gfx1100"]   # enable RD1401/RD1402 (or "gfx90a;gfx1100")
//	baseline = "rocmdoctor-baseline.json"   # relative to the file
//	[severity]                # per rule ID or name: error, warning, note, off
//	RD1207 = "off"
//	[[ignore]]                # all given fields must match
//	rules = ["RD1001"]        # or rule = "undefined-symbol"
//	path = "**/libcuda*.so*"
//	symbol = "LLVMInitialize*"
//	soname = "libamdhip64.so.*"
//
// Values already set in opts (from flags) win over the file.
func LoadConfig(path string, opts *CheckOptions) (baseline string, err error) {
	b, err := regfile.ReadFile(path)
	if err != nil {
		return "", err
	}
	parse := config.Parse
	if ext := filepath.Ext(path); ext == ".yaml" || ext == ".yml" {
		parse = config.ParseYAML
	}
	doc, err := parse(string(b))
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	bad := func(e error) error { return fmt.Errorf("%s: %w", path, e) }
	for _, k := range []string{"glibc", "glibcxx", "baseline"} {
		v, ok, err := doc.Root.String(k)
		if err != nil {
			return "", bad(err)
		}
		if !ok {
			continue
		}
		switch k {
		case "glibc":
			if opts.Glibc == "" {
				opts.Glibc = v
			}
		case "glibcxx":
			if opts.Glibcxx == "" {
				opts.Glibcxx = v
			}
		case "baseline":
			baseline = filepath.Join(filepath.Dir(path), v)
		}
	}
	for _, b := range []struct {
		key string
		dst *bool
	}{{"expect_runpath", &opts.ExpectRunpath}, {"dlopen_strings", &opts.DlopenStrings}} {
		if v, ok, err := doc.Root.Bool(b.key); err != nil {
			return "", bad(err)
		} else if ok && v {
			*b.dst = true
		}
	}
	if v, ok := doc.Root["gpu_targets"]; ok && len(opts.GPUTargets) == 0 {
		var ts []string
		switch v := v.(type) {
		case []string:
			ts = v
		case string:
			ts = strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ';' || r == ' ' })
		default:
			return "", bad(fmt.Errorf("gpu_targets must be an array of strings or a string"))
		}
		for _, t := range ts {
			if _, err := elfx.ParseTargetID(t); err != nil {
				return "", bad(fmt.Errorf("gpu_targets: %q: %w", t, err))
			}
		}
		opts.GPUTargets = ts
	}
	for k := range doc.Root {
		switch k {
		case "glibc", "glibcxx", "baseline", "expect_runpath", "dlopen_strings", "gpu_targets":
		default:
			return "", bad(fmt.Errorf("unknown setting %q", k))
		}
	}
	for k, v := range doc.Tables["severity"] {
		if _, ok := LookupRule(k); !ok {
			return "", bad(fmt.Errorf("[severity]: unknown rule %q", k))
		}
		s, isStr := v.(string)
		if !isStr {
			return "", bad(fmt.Errorf("[severity] %s must be a string", k))
		}
		sev, err := ParseSeverity(s)
		if err != nil {
			return "", bad(fmt.Errorf("[severity] %s: %w", k, err))
		}
		if opts.Severity == nil {
			opts.Severity = map[string]Severity{}
		}
		opts.Severity[k] = sev
	}
	for i, t := range doc.Arrays["ignore"] {
		var ig Ignore
		for k, v := range t {
			switch k {
			case "rules":
				xs, ok := v.([]string)
				if !ok {
					return "", bad(fmt.Errorf("[[ignore]] %d: rules must be an array of strings", i+1))
				}
				ig.Rules = append(ig.Rules, xs...)
			case "rule", "path", "symbol", "soname":
				s, ok := v.(string)
				if !ok {
					return "", bad(fmt.Errorf("[[ignore]] %d: %s must be a string", i+1, k))
				}
				switch k {
				case "rule":
					ig.Rules = append(ig.Rules, s)
				case "path":
					ig.Path = s
				case "symbol":
					ig.Symbol = s
				case "soname":
					ig.Soname = s
				}
			default:
				return "", bad(fmt.Errorf("[[ignore]] %d: unknown key %q", i+1, k))
			}
		}
		for _, r := range ig.Rules {
			if _, ok := LookupRule(r); !ok {
				return "", bad(fmt.Errorf("[[ignore]] %d: unknown rule %q", i+1, r))
			}
		}
		if len(ig.Rules) == 0 && ig.Path == "" && ig.Symbol == "" && ig.Soname == "" {
			return "", bad(fmt.Errorf("[[ignore]] %d matches everything; give rules, path, symbol or soname", i+1))
		}
		opts.Ignores = append(opts.Ignores, ig)
	}
	for k := range doc.Tables {
		if k != "severity" {
			return "", bad(fmt.Errorf("unknown table [%s]", k))
		}
	}
	for k := range doc.Arrays {
		if k != "ignore" {
			return "", bad(fmt.Errorf("unknown table [[%s]]", k))
		}
	}
	return baseline, nil
}

type baselineFile struct {
	SchemaVersion int      `json:"schema_version"`
	Fingerprints  []string `json:"fingerprints"`
}

// ReadBaseline reads fingerprints written by WriteBaseline.
func ReadBaseline(path string) (map[string]bool, error) {
	b, err := regfile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var bf baselineFile
	if err := json.Unmarshal(b, &bf); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m := map[string]bool{}
	for _, f := range bf.Fingerprints {
		m[f] = true
	}
	return m, nil
}

// WriteBaseline records the fingerprints of rep's findings.
func WriteBaseline(path string, rep *CheckReport) error {
	bf := baselineFile{SchemaVersion: 1, Fingerprints: []string{}}
	for _, f := range rep.Findings {
		bf.Fingerprints = append(bf.Fingerprints, f.Fingerprint())
	}
	sort.Strings(bf.Fingerprints)
	b, err := json.MarshalIndent(bf, "", "  ")
	if err != nil {
		return err
	}
	return safefile.WriteFile(path, append(b, '\n'), 0o644)
}
