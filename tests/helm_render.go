// helm_render: renders a Helm v3 chart the way `helm template` does, for a
// machine without Helm (not a Debian package). Helm's engine is Go's
// text/template with Sprig's functions; this program uses the same:
// text/template, Sprig 3.2.3 (Debian's golang-github-masterminds-sprig-dev,
// a version Helm 3 releases built with) and gopkg.in/yaml.v2 (Debian's
// golang-gopkg-yaml.v2-dev, which sigs.k8s.io/yaml wraps). What it takes
// from Helm, written after Helm 3's source (pkg/engine, pkg/chartutil,
// pkg/releaseutil, pkg/action):
//   - values: YAML read through JSON (numbers become float64, as in Helm);
//     -f files merged in order, then coalesced with values.yaml (a null
//     removes a default);
//   - the function map: Sprig's minus env/expandenv, plus Helm's toYaml,
//     fromYaml, toJson, fromJson, include, required and lookup (empty, as
//     `helm template` has no cluster);
//   - templates parsed shallowest path first, partials (_*) not emitted,
//     missingkey=zero and "<no value>" removed (missingkey=error with
//     --strict, as `helm lint --strict`);
//   - output: each file split into documents, empty ones dropped, sorted by
//     Helm's install order of kinds, each as "---\n# Source: <path>\n<doc>\n";
//     NOTES.txt rendered but printed only with --notes.
//
// Not done: subcharts, .Files, .Capabilities, tpl, toToml, hooks, values
// schemas, --set. A chart using them fails to render here (an unknown
// function at parse, a missing object at execution) rather than rendering
// without them.
//
//	helm_render [--name NAME] [--namespace NS] [-f VALUES]... [--strict] [--notes] [--lint] CHART
//
// --lint: some of helm lint's rules (Chart.yaml's required fields, SemVer
// version, type; values.yaml a map; every rendered document YAML with
// apiVersion, kind and a DNS-1123 metadata.name), rendering strictly.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/Masterminds/semver/v3"
	"github.com/Masterminds/sprig/v3"
	yaml "gopkg.in/yaml.v2"
)

// Metadata: Helm's chart.Metadata, the fields templates see as .Chart.
type Metadata struct {
	Name         string              `json:"name,omitempty"`
	Home         string              `json:"home,omitempty"`
	Sources      []string            `json:"sources,omitempty"`
	Version      string              `json:"version,omitempty"`
	Description  string              `json:"description,omitempty"`
	Keywords     []string            `json:"keywords,omitempty"`
	Maintainers  []map[string]string `json:"maintainers,omitempty"`
	Icon         string              `json:"icon,omitempty"`
	APIVersion   string              `json:"apiVersion,omitempty"`
	Condition    string              `json:"condition,omitempty"`
	Tags         string              `json:"tags,omitempty"`
	AppVersion   string              `json:"appVersion,omitempty"`
	Deprecated   bool                `json:"deprecated,omitempty"`
	Annotations  map[string]string   `json:"annotations,omitempty"`
	KubeVersion  string              `json:"kubeVersion,omitempty"`
	Dependencies []interface{}       `json:"dependencies,omitempty"`
	Type         string              `json:"type,omitempty"`
}

// yamlToJSON: sigs.k8s.io/yaml's path from YAML to JSON (yaml.v2 decodes,
// map keys become strings, encoding/json encodes).
func yamlToJSON(y []byte) ([]byte, error) {
	var obj interface{}
	if err := yaml.Unmarshal(y, &obj); err != nil {
		return nil, err
	}
	j, err := jsonable(obj)
	if err != nil {
		return nil, err
	}
	return json.Marshal(j)
}

func jsonable(v interface{}) (interface{}, error) {
	switch t := v.(type) {
	case map[interface{}]interface{}:
		m := make(map[string]interface{}, len(t))
		for k, val := range t {
			var ks string
			switch kt := k.(type) {
			case string:
				ks = kt
			case int:
				ks = strconv.FormatInt(int64(kt), 10)
			case int64:
				ks = strconv.FormatInt(kt, 10)
			case float64:
				ks = strconv.FormatFloat(kt, 'g', -1, 64)
			case bool:
				ks = strconv.FormatBool(kt)
			default:
				return nil, fmt.Errorf("unsupported map key %#v", k)
			}
			c, err := jsonable(val)
			if err != nil {
				return nil, err
			}
			m[ks] = c
		}
		return m, nil
	case []interface{}:
		out := make([]interface{}, len(t))
		for i, e := range t {
			c, err := jsonable(e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	return v, nil
}

// yamlUnmarshal: sigs.k8s.io/yaml.Unmarshal.
func yamlUnmarshal(y []byte, o interface{}) error {
	j, err := yamlToJSON(y)
	if err != nil {
		return err
	}
	return json.Unmarshal(j, o)
}

// readValues: chartutil.ReadValues (an empty file is an empty map).
func readValues(file string) (map[string]interface{}, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var vals map[string]interface{}
	if err := yamlUnmarshal(data, &vals); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	if vals == nil {
		vals = map[string]interface{}{}
	}
	return vals, nil
}

// mergeMaps: Helm's merge of several -f files, the later winning.
func mergeMaps(a, b map[string]interface{}) map[string]interface{} {
	out := make(map[string]interface{}, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if v, ok := v.(map[string]interface{}); ok {
			if bv, ok := out[k]; ok {
				if bv, ok := bv.(map[string]interface{}); ok {
					out[k] = mergeMaps(bv, v)
					continue
				}
			}
		}
		out[k] = v
	}
	return out
}

// coalesce: chartutil's coalesceValues / coalesceTables: the user's values
// (dst) over the chart's defaults (src); a null in dst removes the key.
func coalesce(dst, src map[string]interface{}, prefix string) map[string]interface{} {
	if dst == nil {
		return src
	}
	for key, val := range src {
		full := strings.TrimPrefix(prefix+"."+key, ".")
		dv, ok := dst[key]
		switch {
		case ok && dv == nil:
			delete(dst, key)
		case !ok:
			dst[key] = val
		case isTable(val):
			if isTable(dv) {
				coalesce(dv.(map[string]interface{}), val.(map[string]interface{}), full)
			} else {
				fmt.Fprintf(os.Stderr, "warning: cannot overwrite table with non table for %s (%v)\n", full, val)
			}
		case isTable(dv) && val != nil:
			fmt.Fprintf(os.Stderr, "warning: destination for %s is a table. Ignoring non-table value (%v)\n", full, val)
		}
	}
	return dst
}

func isTable(v interface{}) bool { _, ok := v.(map[string]interface{}); return ok }

// Helm's own template functions (pkg/engine/funcs.go).
func toYAML(v interface{}) string {
	j, err := json.Marshal(v)
	if err != nil {
		return "" // Helm swallows errors inside a template
	}
	var obj interface{}
	if err := yaml.Unmarshal(j, &obj); err != nil {
		return ""
	}
	data, err := yaml.Marshal(obj)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(data), "\n")
}

func fromYAML(str string) map[string]interface{} {
	m := map[string]interface{}{}
	if err := yamlUnmarshal([]byte(str), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

func toJSON(v interface{}) string {
	data, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(data)
}

func fromJSON(str string) map[string]interface{} {
	m := make(map[string]interface{})
	if err := json.Unmarshal([]byte(str), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

func funcMap(t *template.Template) template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	f["toYaml"] = toYAML
	f["fromYaml"] = fromYAML
	f["toJson"] = toJSON
	f["fromJson"] = fromJSON
	f["lookup"] = func(string, string, string, string) (map[string]interface{}, error) {
		return map[string]interface{}{}, nil
	}
	included := map[string]int{}
	f["include"] = func(name string, data interface{}) (string, error) {
		var buf strings.Builder
		if included[name] > 1000 {
			return "", fmt.Errorf("rendering template has a nested reference name: %s", name)
		}
		included[name]++
		err := t.ExecuteTemplate(&buf, name, data)
		included[name]--
		return buf.String(), err
	}
	f["required"] = func(warn string, val interface{}) (interface{}, error) {
		if val == nil {
			return val, errors.New(warn)
		} else if s, ok := val.(string); ok && s == "" {
			return val, errors.New(warn)
		}
		return val, nil
	}
	return f
}

// Helm's parse order, sort.Reverse(byPathLen): deeper paths first, then
// names descending (of two defines of one name, the later parsed wins).
func sortTemplates(names []string) {
	sort.SliceStable(names, func(i, j int) bool {
		a, b := names[i], names[j]
		ca, cb := strings.Count(a, "/"), strings.Count(b, "/")
		if ca == cb {
			return a > b
		}
		return ca > cb
	})
}

// Helm's install order of kinds (pkg/releaseutil/kind_sorter.go).
var installOrder = []string{"Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy",
	"PodDisruptionBudget", "ServiceAccount", "Secret", "SecretList", "ConfigMap", "StorageClass",
	"PersistentVolume", "PersistentVolumeClaim", "CustomResourceDefinition", "ClusterRole", "ClusterRoleList",
	"ClusterRoleBinding", "ClusterRoleBindingList", "Role", "RoleList", "RoleBinding", "RoleBindingList",
	"Service", "DaemonSet", "Pod", "ReplicationController", "ReplicaSet", "Deployment",
	"HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob", "IngressClass", "Ingress", "APIService"}

var docSep = regexp.MustCompile("(?:^|\\s*\n)---\\s*")

type manifest struct {
	source, content, kind string
}

type head struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   *struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
}

var dns1123 = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	name, namespace, chartDir := "release-name", "default", ""
	var valueFiles []string
	strict, notes, lint := false, false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() (string, error) {
			if i+1 >= len(args) {
				return "", fmt.Errorf("%s needs a value", a)
			}
			i++
			return args[i], nil
		}
		var err error
		switch a {
		case "--name":
			name, err = next()
		case "--namespace", "-n":
			namespace, err = next()
		case "-f", "--values":
			var f string
			f, err = next()
			valueFiles = append(valueFiles, f)
		case "--strict":
			strict = true
		case "--notes":
			notes = true
		case "--lint":
			lint, strict = true, true
		default:
			if strings.HasPrefix(a, "-") || chartDir != "" {
				return fmt.Errorf("usage: helm_render [--name NAME] [--namespace NS] [-f VALUES]... [--strict] [--notes] [--lint] CHART")
			}
			chartDir = a
		}
		if err != nil {
			return err
		}
	}
	if chartDir == "" {
		return fmt.Errorf("no chart given")
	}
	var problems []string
	lintf := func(format string, a ...interface{}) { problems = append(problems, fmt.Sprintf(format, a...)) }

	raw, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		return err
	}
	var md Metadata
	if err := yamlUnmarshal(raw, &md); err != nil {
		return fmt.Errorf("Chart.yaml: %v", err)
	}
	if md.APIVersion != "v2" {
		// v1 charts keep dependencies elsewhere; only v2 is done here.
		return fmt.Errorf("Chart.yaml: apiVersion %q: only v2 charts are rendered", md.APIVersion)
	}
	if len(md.Dependencies) > 0 {
		return fmt.Errorf("Chart.yaml: dependencies (subcharts) are not supported")
	}
	if lint {
		if md.Name == "" || strings.ContainsAny(md.Name, "/\\") {
			lintf("Chart.yaml: name %q is required and may not hold a path separator", md.Name)
		}
		if _, err := semver.StrictNewVersion(md.Version); err != nil {
			lintf("Chart.yaml: version %q is not SemVer 2: %v", md.Version, err)
		}
		if md.Type != "" && md.Type != "application" && md.Type != "library" {
			lintf("Chart.yaml: type %q is neither application nor library", md.Type)
		}
		if md.Type == "library" {
			lintf("Chart.yaml: library charts render nothing")
		}
	}

	defaults := map[string]interface{}{}
	if _, err := os.Stat(filepath.Join(chartDir, "values.yaml")); err == nil {
		if defaults, err = readValues(filepath.Join(chartDir, "values.yaml")); err != nil {
			return err
		}
	}
	user := map[string]interface{}{}
	for _, f := range valueFiles {
		v, err := readValues(f)
		if err != nil {
			return err
		}
		user = mergeMaps(user, v)
	}
	values := coalesce(user, defaults, "")

	// The templates: every file under templates/, named <chart>/templates/<path>.
	files := map[string]string{}
	tdir := filepath.Join(chartDir, "templates")
	err = filepath.Walk(tdir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(chartDir, p)
		data, err := os.ReadFile(p)
		files[path.Join(md.Name, filepath.ToSlash(rel))] = string(data)
		return err
	})
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sortTemplates(names)

	t := template.New("gotpl")
	if strict {
		t.Option("missingkey=error")
	} else {
		t.Option("missingkey=zero")
	}
	t.Funcs(funcMap(t))
	for _, n := range names {
		if _, err := t.New(n).Parse(files[n]); err != nil {
			return fmt.Errorf("parse error in %s: %v", n, err)
		}
	}
	top := map[string]interface{}{
		"Values": values,
		"Release": map[string]interface{}{"Name": name, "Namespace": namespace, "IsUpgrade": false,
			"IsInstall": true, "Revision": 1, "Service": "Helm"},
		"Chart":        &md,
		"Capabilities": nil, // not done: a template using it fails
		"Files":        nil,
	}
	rendered := map[string]string{}
	for _, n := range names {
		if strings.HasPrefix(path.Base(n), "_") {
			continue
		}
		top["Template"] = map[string]interface{}{"Name": n, "BasePath": path.Join(md.Name, "templates")}
		var buf strings.Builder
		if err := t.ExecuteTemplate(&buf, n, top); err != nil {
			return fmt.Errorf("execution error in %s: %v", n, err)
		}
		rendered[n] = strings.ReplaceAll(buf.String(), "<no value>", "")
	}

	// pkg/action: NOTES.txt set aside; the rest split, sorted by kind.
	notesText := ""
	paths := []string{}
	for n := range rendered {
		if strings.HasSuffix(n, "NOTES.txt") {
			if n == path.Join(md.Name, "templates", "NOTES.txt") {
				notesText = rendered[n]
			}
			continue
		}
		paths = append(paths, n)
	}
	sort.Strings(paths)
	var manifests []manifest
	for _, p := range paths {
		content := rendered[p]
		if strings.TrimSpace(content) == "" {
			continue
		}
		for _, d := range docSep.Split(strings.TrimSpace(content), -1) {
			if d == "" {
				continue
			}
			d = strings.TrimSpace(d)
			var h head
			if err := yamlUnmarshal([]byte(d), &h); err != nil {
				return fmt.Errorf("YAML parse error on %s: %v", p, err)
			}
			if h.Metadata != nil && h.Metadata.Annotations["helm.sh/hook"] != "" {
				return fmt.Errorf("%s: hooks are not supported", p)
			}
			manifests = append(manifests, manifest{p, d, h.Kind})
			if lint {
				var obj map[string]interface{}
				if err := yaml.Unmarshal([]byte(d), &obj); err != nil {
					lintf("%s: not YAML: %v", p, err)
				}
				switch {
				case h.APIVersion == "" || h.Kind == "":
					lintf("%s: a document without apiVersion or kind", p)
				case h.Metadata == nil || !dns1123.MatchString(h.Metadata.Name) || len(h.Metadata.Name) > 253:
					lintf("%s: %s: metadata.name is not a DNS-1123 subdomain", p, h.Kind)
				}
			}
		}
	}
	order := map[string]int{}
	for i, k := range installOrder {
		order[k] = i
	}
	sort.SliceStable(manifests, func(i, j int) bool {
		a, b := manifests[i], manifests[j]
		oa, aok := order[a.kind]
		ob, bok := order[b.kind]
		if !aok && !bok {
			return a.kind < b.kind
		}
		if !aok {
			return false
		}
		if !bok {
			return true
		}
		return oa < ob
	})
	var out strings.Builder
	for _, m := range manifests {
		fmt.Fprintf(&out, "---\n# Source: %s\n%s\n", m.source, m.content)
	}
	if lint {
		for _, p := range problems {
			fmt.Println(p)
		}
		fmt.Printf("lint (a subset of helm lint's rules): %d problem(s)\n", len(problems))
		if len(problems) > 0 {
			return fmt.Errorf("chart %s failed", md.Name)
		}
		return nil
	}
	fmt.Println(strings.TrimSpace(out.String()))
	if notes {
		fmt.Printf("NOTES:\n%s\n", notesText)
	}
	return nil
}
