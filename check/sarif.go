package check

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/rocmdoctor/rocmdoctor/finding"
)

// SARIF 2.1.0 and JUnit renderings of a Report.

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations"`
	// OriginalURIBaseIDs says where SRCROOT, the base of the results'
	// relative URIs (the scan root), is.
	OriginalURIBaseIDs map[string]sarifArtifact `json:"originalUriBaseIds,omitempty"`
	Results            []sarifResult            `json:"results"`
}

// sarifInvocation says whether the run completed and, as notifications,
// which inputs could not be checked and what the run worked around.
type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications,omitempty"`
}

type sarifNotification struct {
	Level     string          `json:"level"`
	Message   sarifText       `json:"message"`
	Locations []sarifLocation `json:"locations,omitempty"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRule struct {
	ID                   string      `json:"id"`
	Name                 string      `json:"name"`
	ShortDescription     sarifText   `json:"shortDescription"`
	FullDescription      sarifText   `json:"fullDescription"`
	Help                 sarifText   `json:"help"`
	HelpURI              string      `json:"helpUri"`
	DefaultConfiguration sarifConfig `json:"defaultConfiguration"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifText         `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
}

type sarifArtifact struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

func sarifLevel(s finding.Severity) string {
	switch s {
	case finding.SeverityError:
		return "error"
	case finding.SeverityWarning:
		return "warning"
	}
	return "note"
}

// WriteSARIF writes rep as a SARIF 2.1.0 log that GitHub code scanning
// accepts: every rule in the driver, one result per finding with a relative
// artifact URI and a fingerprint.
func WriteSARIF(w io.Writer, rep *Report, toolVersion string) error {
	run := sarifRun{Tool: sarifTool{Driver: sarifDriver{
		Name: "rocmdoctor", Version: toolVersion, InformationURI: "https://github.com/rocmdoctor/rocmdoctor",
	}}, Results: []sarifResult{}}
	index := map[string]int{}
	for i, r := range finding.Rules {
		index[r.ID] = i
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{
			ID: r.ID, Name: r.Name, ShortDescription: sarifText{r.Name}, FullDescription: sarifText{r.Description},
			Help: sarifText{r.Fix}, HelpURI: finding.RuleURL(r.ID), DefaultConfiguration: sarifConfig{sarifLevel(r.Severity)},
		})
	}
	// The files that could not be checked are the run's notifications
	// (an interrupted run did not complete).
	inv := sarifInvocation{ExecutionSuccessful: !rep.Interrupted}
	for _, e := range rep.Errors {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{
			Level: "error", Message: sarifText{e.Error},
			Locations: []sarifLocation{{sarifPhysical{sarifArtifact{URI: filepath.ToSlash(e.Path)}}}},
		})
	}
	for _, w := range rep.Warnings {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{Level: "warning", Message: sarifText{w}})
	}
	run.Invocations = []sarifInvocation{inv}
	// Relative URIs are relative to the scan root (one root: with
	// several, each finding's is its own, and no single base says so).
	root := ""
	if len(rep.Roots) == 1 {
		if abs, err := filepath.Abs(rep.Roots[0]); err == nil {
			if st, err := os.Stat(abs); err == nil && !st.IsDir() {
				abs = filepath.Dir(abs)
			}
			root = abs
			run.OriginalURIBaseIDs = map[string]sarifArtifact{"SRCROOT": {URI: "file://" + filepath.ToSlash(abs) + "/"}}
		}
	}
	for _, f := range rep.Findings {
		msg := f.Message
		if f.Fix != "" {
			msg += " Fix: " + f.Fix
		}
		uri, base := f.RelPath, ""
		if uri == "" {
			uri = f.File
		}
		if root != "" && !filepath.IsAbs(uri) {
			base = "SRCROOT"
		}
		run.Results = append(run.Results, sarifResult{
			RuleID: f.ID, RuleIndex: index[f.ID], Level: sarifLevel(f.Severity), Message: sarifText{msg},
			Locations:           []sarifLocation{{sarifPhysical{sarifArtifact{URI: filepath.ToSlash(uri), URIBaseID: base}}}},
			PartialFingerprints: map[string]string{"rocmdoctor/v1": f.Fingerprint()},
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(sarifLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0", Runs: []sarifRun{run}})
}

// JUnit types, exported so tests and callers can parse reports back.
type JUnitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []JUnitSuite `xml:"testsuite"`
}

// JUnitSuite is one <testsuite>.
type JUnitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Cases    []JUnitCase `xml:"testcase"`
}

// JUnitCase is one finding (classname: its file), or one file without a
// finding at or above the threshold, or one that could not be read.
type JUnitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Failure   *JUnitFailure `xml:"failure"`
	Error     *JUnitFailure `xml:"error"`
}

// JUnitFailure is one finding.
type JUnitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes a test case per finding at or above threshold, one
// failure each (the Ant/Jenkins schema allows one), grouped by file
// through the classname; a file with none is one passing case, a path
// that could not be read one with an error. Lower findings fail nothing
// and are left out.
func WriteJUnit(w io.Writer, rep *Report, threshold string) error {
	suite := JUnitSuite{Name: "rocmdoctor check"}
	byFile := map[string][]finding.Finding{}
	for _, f := range rep.Findings {
		byFile[f.File] = append(byFile[f.File], f)
	}
	files := append([]string(nil), rep.Files...)
	var extra []string
	for f := range byFile {
		if !slices.Contains(files, f) {
			extra = append(extra, f) // wheel members, CK Targets files
		}
	}
	errs := map[string]string{}
	for _, e := range rep.Errors {
		errs[e.Path] = e.Error
		if !slices.Contains(files, e.Path) && !slices.Contains(extra, e.Path) {
			extra = append(extra, e.Path) // a path that is missing, or empty
		}
	}
	sort.Strings(extra)
	files = append(files, extra...)
	for _, p := range files {
		failed, names := 0, map[string]int{}
		for _, f := range byFile[p] {
			if !f.Severity.AtLeast(threshold) {
				continue
			}
			failed++
			name := junitName(f)
			if n := names[name]; n > 0 {
				name += fmt.Sprintf(" (%d)", n+1) // a file's cases are told apart
			}
			names[junitName(f)]++
			suite.Cases = append(suite.Cases, JUnitCase{Classname: p, Name: name, Failure: &JUnitFailure{
				Message: f.Message, Type: f.ID + " " + f.Rule,
				Text: fmt.Sprintf("%s %s (%s)\n%s\nfix: %s", f.ID, f.Rule, f.Severity, f.Message, f.Fix)}})
		}
		suite.Failures += failed
		if e, ok := errs[p]; ok {
			suite.Cases = append(suite.Cases, JUnitCase{Classname: p, Name: p, Error: &JUnitFailure{Message: e, Type: "read-error", Text: e}})
			suite.Errors++
		} else if failed == 0 {
			suite.Cases = append(suite.Cases, JUnitCase{Classname: p, Name: p})
		}
	}
	suite.Tests = len(suite.Cases)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(JUnitSuites{Suites: []JUnitSuite{suite}}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// junitName names a finding's test case: its rule and what it is about
// (the symbol, library or version), or its rule alone.
func junitName(f finding.Finding) string {
	about := f.Symbol
	if about == "" {
		about = f.Library
	}
	if f.Version != "" {
		about = strings.TrimPrefix(about+"@"+f.Version, "@")
	}
	if about == "" {
		return f.ID + " " + f.Rule
	}
	return f.ID + " " + f.Rule + ": " + about
}
