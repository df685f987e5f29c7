// Package gtm holds the Google Tag Manager template and Custom HTML tag
// that install t.js (README.md); its test checks the template's shape and
// runs its sandboxed code under Node with the sandbox's APIs stubbed.
package gtm

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// sections splits a .tpl file into its ___NAME___ sections.
func sections(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("template.tpl")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	re := regexp.MustCompile(`(?m)^___([A-Z_]+)___$`)
	idx := re.FindAllStringSubmatchIndex(string(b), -1)
	for i, m := range idx {
		end := len(b)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		out[string(b[m[2]:m[3]])] = strings.TrimSpace(string(b[m[1]:end]))
	}
	return out
}

// apiPermission is the permission each sandboxed API needs ("" none).
var apiPermission = map[string]string{
	"injectScript": "inject_script", "copyFromWindow": "access_globals", "createQueue": "access_globals",
	"callInWindow": "access_globals", "setInWindow": "access_globals", "isConsentGranted": "access_consent",
	"addConsentListener": "access_consent", "logToConsole": "logging", "encodeUriComponent": "",
}

// TestTemplateShape: the sections Tag Manager's import wants, valid JSON
// in each JSON section, and a declared permission for every API the code
// requires, so that the import needs no edit.
func TestTemplateShape(t *testing.T) {
	s := sections(t)
	for _, name := range []string{"TERMS_OF_SERVICE", "INFO", "TEMPLATE_PARAMETERS", "SANDBOXED_JS_FOR_WEB_TEMPLATE", "WEB_PERMISSIONS", "TESTS"} {
		if s[name] == "" {
			t.Errorf("section ___%s___ is missing or empty", name)
		}
	}
	var info struct {
		Type              string   `json:"type"`
		ContainerContexts []string `json:"containerContexts"`
	}
	if err := json.Unmarshal([]byte(s["INFO"]), &info); err != nil || info.Type != "TAG" || len(info.ContainerContexts) != 1 || info.ContainerContexts[0] != "WEB" {
		t.Errorf("___INFO___: %+v %v", info, err)
	}
	var params []struct{ Name string }
	if err := json.Unmarshal([]byte(s["TEMPLATE_PARAMETERS"]), &params); err != nil || len(params) != 3 {
		t.Errorf("___TEMPLATE_PARAMETERS___: %v %v", params, err)
	}
	var perms []struct {
		Instance struct {
			Key struct {
				PublicID string `json:"publicId"`
			} `json:"key"`
		} `json:"instance"`
	}
	if err := json.Unmarshal([]byte(s["WEB_PERMISSIONS"]), &perms); err != nil {
		t.Fatalf("___WEB_PERMISSIONS___: %v", err)
	}
	declared := map[string]bool{}
	for _, p := range perms {
		declared[p.Instance.Key.PublicID] = true
	}
	for _, m := range regexp.MustCompile(`require\('(\w+)'\)`).FindAllStringSubmatch(s["SANDBOXED_JS_FOR_WEB_TEMPLATE"], -1) {
		p, known := apiPermission[m[1]]
		switch {
		case !known:
			t.Errorf("the code requires %s, whose permission this test does not know", m[1])
		case p != "" && !declared[p]:
			t.Errorf("the code requires %s, but ___WEB_PERMISSIONS___ lacks %s", m[1], p)
		}
	}
}

// harness runs the template's code under Node with the sandbox's APIs
// stubbed; it prints what the code did as JSON.
const harness = `
const calls = {inject: [], queued: [], listeners: 0, success: 0};
const win = JSON.parse(process.argv[2]);
const apis = {
  injectScript: (url, ok, fail, token) => { calls.inject.push(url); ok(); },
  encodeUriComponent: encodeURIComponent,
  copyFromWindow: (k) => win[k],
  createQueue: (k) => (call) => { calls.queued.push(call); },
  isConsentGranted: (type) => type === 'ad_storage' && win.granted === true,
  addConsentListener: () => { calls.listeners++; },
  callInWindow: () => {},
  logToConsole: () => {},
};
const data = JSON.parse(process.argv[1]);
data.gtmOnSuccess = () => { calls.success++; };
data.gtmOnFailure = () => {};
const require = (name) => { if (!(name in apis)) throw new Error('no stub for ' + name); return apis[name]; };
(new Function('require', 'data', process.argv[3]))(require, data);
console.log(JSON.stringify(calls));
`

// TestTemplateRuns: the template loads t.js from the server named, with
// the site in its address; tells t.js the Consent Mode state first when
// asked; and does nothing when t.js is on the page already.
func TestTemplateRuns(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	code := sections(t)["SANDBOXED_JS_FOR_WEB_TEMPLATE"]
	cases := []struct {
		name, data, window, want string
	}{
		{"plain", `{"serverUrl":"https://t.example.com/","siteId":"dent","followConsent":false}`, `{}`,
			`{"inject":["https://t.example.com/t.js?site=dent"],"queued":[],"listeners":0,"success":1}`},
		{"consent mode", `{"serverUrl":"https://t.example.com","siteId":"dent","followConsent":true}`, `{"granted":true}`,
			`{"inject":["https://t.example.com/t.js?site=dent"],"queued":[["consent",true]],"listeners":1,"success":1}`},
		{"installed already", `{"serverUrl":"https://t.example.com","siteId":"dent","followConsent":true}`, `{"cleanads":{"v":2}}`,
			`{"inject":[],"queued":[],"listeners":0,"success":1}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := exec.Command(node, "-e", harness, "--", c.data, c.window, code).CombinedOutput()
			if err != nil {
				t.Fatalf("node: %v\n%s", err, out)
			}
			if got := strings.TrimSpace(string(out)); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}
