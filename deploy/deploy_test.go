package deploy

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/contentapi/contentapi/internal/app"
	"github.com/contentapi/contentapi/internal/config"
	"github.com/contentapi/contentapi/jobs"
)

// Every document of every manifest decodes strictly into its Kubernetes type (or, for a
// CRD, into the declared shape of its schema), with valid names, namespaces and labels.
func TestManifestsDecodeStrictly(t *testing.T) {
	m := loadAll()
	for _, err := range m.errs {
		t.Error(err)
	}
	if len(m.objects) == 0 {
		t.Fatal("no manifest found under deploy/kubernetes")
	}
	seen := map[string]*object{}
	for _, o := range m.objects {
		key := o.Kind + "/" + o.Meta.GetName()
		if prev, dup := seen[key]; dup {
			t.Errorf("%v and %v: two objects of the same kind and name", prev, o)
		}
		seen[key] = o
	}
}

// The strict decoding really refuses mistakes, so a passing TestManifestsDecodeStrictly means
// something.
func TestStrictDecodingRefusesMistakes(t *testing.T) {
	const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: x, namespace: contentapi}
spec:
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec:
      containers:
        - name: c
          image: contentapi-api
%s
`
	const scaled = `apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: x, namespace: contentapi}
spec:
  scaleTargetRef: {name: x}
  triggers:
    - type: redis
      metadata: {%s}
`
	for name, doc := range map[string]string{
		"misspelt field":          fmt.Sprintf(deployment, "          readynessProbe: {httpGet: {path: /readyz, port: 8080}}"),
		"field in the wrong case": fmt.Sprintf(deployment, "          ReadinessProbe: {httpGet: {path: /readyz, port: 8080}}"),
		"misplaced field":         fmt.Sprintf(deployment, "          terminationGracePeriodSeconds: 30"),
		"duplicate field":         fmt.Sprintf(deployment, "          image: contentapi-worker"),
		"wrong type":              fmt.Sprintf(deployment, "          ports: [{containerPort: http}]"),
		"unknown kind":            "apiVersion: v1\nkind: Pod\nmetadata: {name: x, namespace: contentapi}\n",
		"old API version":         "apiVersion: autoscaling/v2beta2\nkind: HorizontalPodAutoscaler\nmetadata: {name: x, namespace: contentapi}\n",
		"wrong namespace":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\n",
		"CRD misspelt field":      fmt.Sprintf(scaled, `listName: a`) + "  minReplicas: 1\n",
		"CRD unquoted number":     fmt.Sprintf(scaled, `listName: a, listLength: 10`),
	} {
		if _, errs := parseManifest(name, []byte(doc)); len(errs) == 0 {
			t.Errorf("%s: decoded without error", name)
		}
	}
}

// The objects the deployment consists of are all there.
func TestRequiredObjects(t *testing.T) {
	m := manifests(t)
	for _, want := range []struct{ kind, name string }{
		{"Namespace", namespace},
		{"ConfigMap", "contentapi-config"},
		{"Secret", "contentapi-secrets"},
		{"Deployment", "contentapi-api"},
		{"Service", "contentapi-api"},
		{"HorizontalPodAutoscaler", "contentapi-api"},
		{"PodDisruptionBudget", "contentapi-api"},
		{"Deployment", "contentapi-worker"},
		{"ScaledObject", "contentapi-worker"},
		{"HorizontalPodAutoscaler", "contentapi-worker"},
		{"Job", "contentapi-migrate"},
		{"Job", "contentapi-seed"},
		{"NetworkPolicy", "contentapi-api-ingress"},
	} {
		if m.find(want.kind, want.name) == nil {
			t.Errorf("no %s %s in deploy/kubernetes", want.kind, want.name)
		}
	}
}

type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace,omitempty"`
	Resources  []string `json:"resources"`
	Images     []struct {
		Name    string `json:"name"`
		NewName string `json:"newName,omitempty"`
		NewTag  string `json:"newTag,omitempty"`
		Digest  string `json:"digest,omitempty"`
	} `json:"images,omitempty"`
	Patches []struct {
		Patch string `json:"patch,omitempty"`
		Path  string `json:"path,omitempty"`
	} `json:"patches,omitempty"`
}

// kedaOverlay is the kustomization, under deploy/kubernetes, that scales the worker with
// KEDA; the base applies on a cluster without it.
const kedaOverlay = "overlays/keda"

// optionalFile reports whether a manifest is meant to be applied by hand, not by -k: a
// template (secrets) or an alternative.
func optionalFile(name string) bool {
	return strings.HasSuffix(name, ".example.yaml") || strings.HasSuffix(name, ".optional.yaml")
}

// kustomizationDirs lists the directories under deploy/kubernetes holding a
// kustomization.yaml, slash-separated ("." for deploy/kubernetes itself).
func kustomizationDirs(t *testing.T) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(kubeDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "kustomization.yaml" {
			rel, _ := filepath.Rel(kubeDir, filepath.Dir(p))
			dirs = append(dirs, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no kustomization.yaml under deploy/kubernetes")
	}
	return dirs
}

func readKustomization(dir string) (kustomization, error) {
	var k kustomization
	data, err := os.ReadFile(filepath.Join(kubeDir, filepath.FromSlash(dir), "kustomization.yaml"))
	if err == nil {
		err = yaml.UnmarshalStrict(data, &k)
	}
	if err != nil {
		return k, fmt.Errorf("%s/kustomization.yaml: %w", dir, err)
	}
	return k, nil
}

// kustomized is what `kustomize build` of a directory yields, as far as these tests read
// it: the objects (of its files and its bases', less those its patches delete) and the
// images its and its bases' images lists set.
type kustomized struct {
	objects []*object
	images  map[string]string // image name → newName:newTag[@digest]
}

// kustomize builds the kustomization in dir (under deploy/kubernetes). A resource is a
// manifest file or a directory with a kustomization (a base); the only patches understood
// are inline `$patch: delete` ones, each of which must delete an object.
func kustomize(m manifestSet, dir string, depth int) (kustomized, error) {
	out := kustomized{images: map[string]string{}}
	if depth > 5 {
		return out, fmt.Errorf("%s: bases nested too deep (a cycle?)", dir)
	}
	k, err := readKustomization(dir)
	if err != nil {
		return out, err
	}
	for _, r := range k.Resources {
		f := path.Clean(path.Join(dir, r))
		if _, err := os.Stat(filepath.Join(kubeDir, filepath.FromSlash(f), "kustomization.yaml")); err == nil {
			base, err := kustomize(m, f, depth+1)
			if err != nil {
				return out, err
			}
			out.objects = append(out.objects, base.objects...)
			maps.Copy(out.images, base.images)
			continue
		}
		out.objects = append(out.objects, m.inFiles([]string{f}).objects...)
	}
	for _, img := range k.Images {
		ref := img.NewName + ":" + img.NewTag
		if img.Digest != "" {
			ref += "@" + img.Digest
		}
		out.images[img.Name] = ref
	}
	for i, p := range k.Patches {
		var del struct {
			Patch      string `json:"$patch"`
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(p.Patch), &del); err != nil || p.Path != "" || del.Patch != "delete" {
			return out, fmt.Errorf("%s/kustomization.yaml: patch %d is not an inline $patch: delete (the only kind these tests read; %v)", dir, i+1, err) //nolint:errorlint // err may be nil: the patch may fail the other checks
		}
		n := len(out.objects)
		out.objects = slices.DeleteFunc(out.objects, func(o *object) bool {
			return o.APIVersion == del.APIVersion && o.Kind == del.Kind && o.Meta.GetName() == del.Metadata.Name
		})
		if len(out.objects) == n {
			return out, fmt.Errorf("%s/kustomization.yaml: patch %d deletes %s %s %s, which its resources do not have", dir, i+1, del.APIVersion, del.Kind, del.Metadata.Name)
		}
	}
	return out, nil
}

// The kustomizations list existing files (or bases), never the secret template or an
// alternative, cover every other manifest, pin every image they use, agree with each other
// on the image names and tags, and never scale one Deployment twice.
func TestKustomizations(t *testing.T) {
	m := manifests(t)
	listed := map[string]string{} // manifest → kustomization listing it
	images := map[string]string{} // image name → newName:newTag, across kustomizations
	for _, dir := range kustomizationDirs(t) {
		rel := path.Join(dir, "kustomization.yaml")
		k, err := readKustomization(dir)
		if err != nil {
			t.Error(err)
			continue
		}
		if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
			t.Errorf("%s: apiVersion %q kind %q", rel, k.APIVersion, k.Kind)
		}
		if k.Namespace != namespace {
			t.Errorf("%s: namespace %q, want %q", rel, k.Namespace, namespace)
		}
		bases := 0
		for _, r := range k.Resources {
			f := path.Clean(path.Join(dir, r))
			switch {
			case strings.Contains(r, "://") || strings.HasPrefix(f, ".."):
				t.Errorf("%s: resource %q is outside deploy/kubernetes", rel, r)
			case slices.Contains(kustomizationDirs(t), f):
				if f == "." || f == dir || strings.HasPrefix(dir, f+"/") {
					t.Errorf("%s: base %q holds this kustomization, which kustomize refuses (a cycle)", rel, r)
				}
				bases++
				continue
			case dir != "." && !strings.HasPrefix(f, dir+"/"):
				t.Errorf("%s: resource %q is a file outside its directory, which kubectl apply -k refuses to load; make its directory a base", rel, r)
			case optionalFile(f):
				t.Errorf("%s: lists %s, a template or alternative that must not be applied with -k", rel, r)
			case !slices.Contains(m.files, f):
				t.Errorf("%s: resource %q is not a manifest file or kustomization directory here", rel, r)
			}
			if prev, ok := listed[f]; ok {
				t.Errorf("%s and %s both list %s", prev, rel, f)
			}
			listed[f] = rel
		}
		if bases > 0 && len(k.Images) > 0 {
			t.Errorf("%s: an overlay with an images list: set images in its base (a base's images are already renamed when an overlay's list would match them)", rel)
		}
		built, err := kustomize(m, dir, 0)
		if err != nil {
			t.Error(err)
			continue
		}
		for _, img := range k.Images {
			if !slices.Contains(targets, strings.TrimPrefix(img.Name, "contentapi-")) {
				t.Errorf("%s: image %q is not one deploy/Dockerfile builds", rel, img.Name)
			}
			if img.NewName != "" && path.Base(img.NewName) != img.Name {
				t.Errorf("%s: image %s renamed to %s: keep the image name, change only the registry", rel, img.Name, img.NewName)
			}
			if img.Digest == "" && (img.NewTag == "" || img.NewTag == "latest") {
				t.Errorf("%s: image %s needs a fixed newTag (or digest), not %q", rel, img.Name, img.NewTag)
			}
			ref := built.images[img.Name]
			if prev, ok := images[img.Name]; ok && prev != ref {
				t.Errorf("%s: image %s is %s here but %s in another kustomization", rel, img.Name, ref, prev)
			}
			images[img.Name] = ref
		}
		set := manifestSet{objects: built.objects}
		for _, c := range set.containers() {
			if _, ok := built.images[c.Image]; !ok {
				t.Errorf("%s: %s uses image %s, which its images list (or its base's) does not set", rel, c, c.Image)
			}
		}
		scaled := map[string]string{}
		for _, o := range set.objects {
			var target string
			switch v := o.Obj.(type) {
			case *autoscalingv2.HorizontalPodAutoscaler:
				target = v.Spec.ScaleTargetRef.Name
			case *scaledObject:
				target = v.Spec.ScaleTargetRef.Name
			default:
				continue
			}
			if prev, ok := scaled[target]; ok {
				t.Errorf("%s: %s and %v both scale Deployment %s", rel, prev, o, target)
			}
			scaled[target] = o.String()
		}
	}
	for _, f := range m.files {
		if _, ok := listed[f]; !ok && !optionalFile(f) {
			t.Errorf("%s is in no kustomization (name it *.optional.yaml if it is applied by hand)", f)
		}
	}
}

// `kubectl apply -k deploy/kubernetes` works on a cluster without KEDA: only the KEDA
// overlay yields keda.sh objects, and it is the base with the worker's CPU autoscaler
// replaced by KEDA's ScaledObject (and its TriggerAuthentication). deploy/README.md gives
// both commands.
func TestKEDAIsAnOverlay(t *testing.T) {
	m := manifests(t)
	for _, dir := range kustomizationDirs(t) {
		built, err := kustomize(m, dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range built.objects {
			if strings.HasPrefix(o.APIVersion, "keda.sh/") && dir != kedaOverlay {
				t.Errorf("%s/kustomization.yaml applies %v: a cluster without KEDA refuses the whole apply; KEDA objects belong in %s", dir, o, kedaOverlay)
			}
		}
	}
	base, err := kustomize(m, ".", 0)
	if err != nil {
		t.Fatal(err)
	}
	overlay, err := kustomize(m, kedaOverlay, 0)
	if err != nil {
		t.Fatal(err)
	}
	isWorkerHPA := func(o *object) bool {
		return o.Kind == "HorizontalPodAutoscaler" && o.Meta.GetName() == "contentapi-worker"
	}
	if !slices.ContainsFunc(base.objects, isWorkerHPA) {
		t.Error("the base scales no worker on a cluster without KEDA: no HorizontalPodAutoscaler contentapi-worker")
	}
	if slices.ContainsFunc(overlay.objects, isWorkerHPA) {
		t.Errorf("%s keeps the base's HorizontalPodAutoscaler contentapi-worker beside KEDA's", kedaOverlay)
	}
	for _, o := range base.objects {
		if !isWorkerHPA(o) && !slices.Contains(overlay.objects, o) {
			t.Errorf("%s lacks %v of the base", kedaOverlay, o)
		}
	}
	for _, want := range []string{"ScaledObject/contentapi-worker", "TriggerAuthentication/contentapi-keda-redis"} {
		if !slices.ContainsFunc(overlay.objects, func(o *object) bool { return o.Kind+"/"+o.Meta.GetName() == want }) {
			t.Errorf("%s has no %s", kedaOverlay, want)
		}
	}
	readme := readRepoFile(t, "deploy/README.md")
	for _, cmd := range []string{"`kubectl apply -k deploy/kubernetes`", "`kubectl apply -k deploy/kubernetes/" + kedaOverlay + "`"} {
		if !strings.Contains(readme, cmd) {
			t.Errorf("deploy/README.md does not give %s", cmd)
		}
	}
}

// Every pod runs as the distroless non-root user with no privileges and a read-only root
// file system, within the namespace's "restricted" Pod Security level, with resources set.
func TestPodHardening(t *testing.T) {
	m := manifests(t)
	stages := dockerStages(t)
	ns := m.find("Namespace", namespace)
	if ns == nil || ns.Meta.GetLabels()["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Errorf("namespace %s should enforce the restricted Pod Security level", namespace)
	}
	allowedVolumes := func(v corev1.Volume) bool {
		s := v.VolumeSource
		return s.EmptyDir != nil || s.ConfigMap != nil || s.Secret != nil || s.Projected != nil || s.DownwardAPI != nil ||
			s.PersistentVolumeClaim != nil || s.Ephemeral != nil || s.CSI != nil
	}
	for _, w := range m.workloads() {
		spec := w.pod.Spec
		psc := spec.SecurityContext
		if psc == nil {
			psc = &corev1.PodSecurityContext{}
		}
		if spec.HostNetwork || spec.HostPID || spec.HostIPC {
			t.Errorf("%v: uses the host's network, PID or IPC namespace", w.obj)
		}
		if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
			t.Errorf("%v: automountServiceAccountToken should be false (the binaries never call the Kubernetes API)", w.obj)
		}
		for _, v := range spec.Volumes {
			if !allowedVolumes(v) {
				t.Errorf("%v: volume %s is of a type the restricted level refuses", w.obj, v.Name)
			}
		}
		if len(spec.InitContainers) > 0 || len(spec.EphemeralContainers) > 0 {
			t.Errorf("%v: init or ephemeral containers are not expected", w.obj)
		}
		for _, c := range spec.Containers {
			where := fmt.Sprintf("%v container %s", w.obj, c.Name)
			for _, msg := range validation.IsDNS1123Label(c.Name) {
				t.Errorf("%s: name: %s", where, msg)
			}
			sc := c.SecurityContext
			if sc == nil {
				t.Errorf("%s: no securityContext", where)
				continue
			}
			if nonRoot := orPod(sc.RunAsNonRoot, psc.RunAsNonRoot); nonRoot == nil || !*nonRoot {
				t.Errorf("%s: runAsNonRoot is not true", where)
			}
			uid := orPod(sc.RunAsUser, psc.RunAsUser)
			if uid != nil && *uid == 0 {
				t.Errorf("%s: runAsUser 0", where)
			}
			// The image names its user ("nonroot"); the kubelet refuses to start a
			// runAsNonRoot container unless it is given the number.
			if st, ok := stages[w.role]; ok {
				if user, ok := st.instruction("USER"); ok {
					name, _, _ := strings.Cut(user, ":")
					if _, err := strconv.Atoi(name); err != nil && uid == nil {
						t.Errorf("%s: the image's USER is %q (not numeric): set runAsUser (65532 for distroless nonroot)", where, user)
					}
				}
			}
			if seccomp := orPod(sc.SeccompProfile, psc.SeccompProfile); seccomp == nil || (seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault && seccomp.Type != corev1.SeccompProfileTypeLocalhost) {
				t.Errorf("%s: seccompProfile should be RuntimeDefault", where)
			}
			if sc.Privileged != nil && *sc.Privileged {
				t.Errorf("%s: privileged", where)
			}
			if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
				t.Errorf("%s: allowPrivilegeEscalation should be false", where)
			}
			if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
				t.Errorf("%s: readOnlyRootFilesystem should be true", where)
			}
			if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
				t.Errorf("%s: capabilities should drop ALL", where)
			} else if len(sc.Capabilities.Add) > 0 {
				t.Errorf("%s: adds capabilities %v", where, sc.Capabilities.Add)
			}
			checkResources(t, where, c.Resources)
		}
	}
}

// orPod is a container's security setting, or its pod's when the container sets none.
func orPod[T any](container, pod *T) *T {
	if container != nil {
		return container
	}
	return pod
}

func checkResources(t *testing.T, where string, r corev1.ResourceRequirements) {
	t.Helper()
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, ok := r.Requests[name]
		if !ok || req.Sign() <= 0 {
			t.Errorf("%s: no %s request", where, name)
			continue
		}
		if lim, ok := r.Limits[name]; ok && lim.Cmp(req) < 0 {
			t.Errorf("%s: %s limit %s under its request %s", where, name, lim.String(), req.String())
		}
	}
	if _, ok := r.Limits[corev1.ResourceMemory]; !ok {
		t.Errorf("%s: no memory limit", where)
	}
}

// imageName strips registry, tag and digest: registry.example.com/x/contentapi-api:1 → contentapi-api.
func imageName(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return path.Base(ref)
}

// deploy/Dockerfile builds every cmd/ binary and has one distroless non-root target per
// image, whose entrypoint is that binary; go list finds cmd/api, cmd/worker and cmd/ctl.
func TestDockerfileBuildsTheBinaries(t *testing.T) {
	stages := dockerStages(t)
	pkgs := mainPackages(t)
	builds := false
	for _, st := range stages {
		for _, l := range st.Lines {
			if strings.HasPrefix(l, "RUN ") && strings.Contains(l, "go build") && strings.Contains(l, "./cmd/...") &&
				strings.Contains(l, "-o /out/") {
				builds = true
			}
		}
	}
	if !builds {
		t.Error("Dockerfile: no stage runs go build -o /out/ ./cmd/...")
	}
	// A module go.mod replaces with a directory of this tree (the Go client, ./client) is
	// part of the module graph: go mod download fails without its go.mod.
	for _, l := range strings.Split(readRepoFile(t, "go.mod"), "\n") {
		_, dir, ok := strings.Cut(l, "=> ./")
		if !strings.HasPrefix(l, "replace ") || !ok {
			continue
		}
		want := "COPY " + dir + "/go.mod " + dir + "/"
		copied, downloaded := false, false
		for _, l := range stages["build"].Lines {
			copied = copied || (l == want && !downloaded)
			downloaded = downloaded || strings.Contains(l, "go mod download")
		}
		if !copied {
			t.Errorf("Dockerfile build stage: no %q before go mod download (go.mod: %s)", want, l)
		}
	}
	for _, target := range targets {
		if !pkgs[module+"/cmd/"+target] {
			t.Errorf("go list ./cmd/... has no main package cmd/%s (found %v)", target, sortedKeys(pkgs))
		}
		st, ok := stages[target]
		if !ok {
			t.Errorf("Dockerfile: no target %q", target)
			continue
		}
		if !strings.HasPrefix(st.From, "gcr.io/distroless/") || !strings.HasSuffix(st.From, ":nonroot") {
			t.Errorf("Dockerfile target %s: FROM %s, want a distroless :nonroot image", target, st.From)
		}
		copied := false
		for _, l := range st.Lines {
			f := strings.Fields(l)
			if len(f) == 4 && f[0] == "COPY" && strings.HasPrefix(f[1], "--from=") && f[2] == "/out/"+target && f[3] == "/"+target {
				copied = true
			}
		}
		if !copied {
			t.Errorf("Dockerfile target %s: does not COPY --from=<build> /out/%s /%s", target, target, target)
		}
		if ep, _ := st.instruction("ENTRYPOINT"); ep != `["/`+target+`"]` {
			t.Errorf("Dockerfile target %s: ENTRYPOINT %s, want [\"/%s\"]", target, ep, target)
		}
		if user, _ := st.instruction("USER"); !strings.HasPrefix(user, "nonroot") && !strings.HasPrefix(user, "65532") {
			t.Errorf("Dockerfile target %s: USER %q, want nonroot", target, user)
		}
	}
}

// hasChromium reports whether a Dockerfile stage installs Debian's chromium and points
// CHROME_PATH at it.
func hasChromium(st dockerStage) bool {
	installs := slices.ContainsFunc(st.Lines, func(l string) bool {
		return strings.HasPrefix(l, "RUN ") && strings.Contains(l, "apt-get install") && slices.Contains(strings.Fields(l), "chromium")
	})
	env, _ := st.instruction("ENV")
	return installs && env == "CHROME_PATH=/usr/bin/chromium"
}

// The worker-render target is the worker with Chromium: Debian's chromium package at
// CHROME_PATH, the same /worker, the distroless images' uid; the distroless images have no
// browser.
func TestRenderWorkerImage(t *testing.T) {
	stages := dockerStages(t)
	st, ok := stages[renderTarget]
	if !ok {
		t.Fatalf("Dockerfile: no target %s", renderTarget)
	}
	if !strings.HasPrefix(st.From, "debian:") || !hasChromium(st) {
		t.Errorf("Dockerfile target %s: FROM %s; want a Debian image that installs chromium and sets CHROME_PATH=/usr/bin/chromium", renderTarget, st.From)
	}
	if !slices.Contains(st.Lines, "COPY --from=build /out/worker /worker") {
		t.Errorf("Dockerfile target %s: does not COPY --from=build /out/worker /worker", renderTarget)
	}
	if ep, _ := st.instruction("ENTRYPOINT"); ep != `["/worker"]` {
		t.Errorf("Dockerfile target %s: ENTRYPOINT %s, want [\"/worker\"]", renderTarget, ep)
	}
	if user, _ := st.instruction("USER"); user != "65532:65532" {
		t.Errorf("Dockerfile target %s: USER %q, want 65532:65532 (distroless nonroot)", renderTarget, user)
	}
	for _, target := range targets {
		if hasChromium(stages[target]) {
			t.Errorf("Dockerfile target %s installs Chromium; only %s should", target, renderTarget)
		}
	}
}

// No binary links test code: a helper package of ours (billingtest, faulttest, openapitest,
// testenv) or the OpenAPI validator the tests check answers with. Every start of every
// binary would pay for it (openapitest's validator alone added 20 package inits and 1 MB).
func TestBinariesCarryNoTestCode(t *testing.T) {
	out, err := goCommand("list", "-deps", "-f", "{{.ImportPath}}", "./cmd/...")
	if err != nil {
		t.Fatalf("go list -deps ./cmd/...: %v\n%s", err, out)
	}
	var linked []string
	for _, pkg := range strings.Fields(out) {
		ours, isOurs := strings.CutPrefix(pkg, module+"/")
		if (isOurs && strings.Contains(path.Base(ours), "test")) || strings.HasPrefix(pkg, "github.com/pb33f/") {
			linked = append(linked, pkg)
		}
	}
	if len(linked) > 0 {
		t.Errorf("the binaries of cmd/ link packages only tests may import:\n%s", strings.Join(linked, "\n"))
	}
}

// Every container runs an image deploy/Dockerfile builds, the one for its role, with the
// image's own entrypoint.
func TestContainersUseTheBuiltImages(t *testing.T) {
	m := manifests(t)
	stages := dockerStages(t)
	for _, c := range m.containers() {
		target, ok := strings.CutPrefix(imageName(c.Image), "contentapi-")
		if _, built := stages[target]; !ok || !built || !slices.Contains(targets, target) {
			t.Errorf("%s: image %s is not one of deploy/Dockerfile's images contentapi-{%s}", c, c.Image, strings.Join(targets, ","))
			continue
		}
		if target != c.role {
			t.Errorf("%s: image %s, but this workload runs %s", c, c.Image, c.role)
		}
		if len(c.Command) > 0 && !slices.Equal(c.Command, []string{"/" + target}) {
			t.Errorf("%s: command %v replaces the image's entrypoint /%s", c, c.Command, target)
		}
	}
}

// The Jobs (and docker-compose's one-off services) run commands ctl really has.
func TestJobsRunRealCtlCommands(t *testing.T) {
	m := manifests(t)
	cmds := ctlCommands(t)
	wantArgs := map[string][]string{
		"contentapi-migrate": {"migrate"},
		"contentapi-seed":    {"seed-sample", "--if-empty"},
	}
	for _, o := range m.ofKind("Job") {
		job := o.Obj.(*batchv1.Job)
		for _, c := range job.Spec.Template.Spec.Containers {
			if err := checkCtlArgs(cmds, c.Args); err != nil {
				t.Errorf("%v container %s: args %q: %v", o, c.Name, c.Args, err)
			}
			if want, ok := wantArgs[o.Meta.GetName()]; ok && !slices.Equal(c.Args, want) {
				t.Errorf("%v container %s: args %q, want %q", o, c.Name, c.Args, want)
			}
		}
		if p := job.Spec.Template.Spec.RestartPolicy; p != corev1.RestartPolicyNever && p != corev1.RestartPolicyOnFailure {
			t.Errorf("%v: restartPolicy %q, want Never or OnFailure", o, p)
		}
		if job.Spec.BackoffLimit == nil || job.Spec.ActiveDeadlineSeconds == nil {
			t.Errorf("%v: set backoffLimit and activeDeadlineSeconds so a broken Job ends", o)
		}
	}
	compose := composeServices(t)
	for _, svc := range []string{"migrate", "seed"} {
		if s, ok := compose[svc]; ok {
			if err := checkCtlArgs(cmds, s.Command); err != nil {
				t.Errorf("docker-compose.yml %s: command %q: %v", svc, s.Command, err)
			}
		}
	}
}

// containerEnv is the environment a container starts with: its envFrom sources in order,
// then env, as the kubelet builds it.
func containerEnv(m manifestSet, c corev1.Container) (map[string]string, []error) {
	env := map[string]string{}
	var errs []error
	for _, from := range c.EnvFrom {
		if from.Prefix != "" {
			errs = append(errs, fmt.Errorf("envFrom prefix %q renames the variables", from.Prefix))
		}
		switch {
		case from.ConfigMapRef != nil:
			o := m.find("ConfigMap", from.ConfigMapRef.Name)
			if o == nil {
				errs = append(errs, fmt.Errorf("envFrom ConfigMap %s does not exist", from.ConfigMapRef.Name))
				continue
			}
			for k, v := range o.Obj.(*corev1.ConfigMap).Data {
				env[k] = v
			}
		case from.SecretRef != nil:
			s := m.secret(from.SecretRef.Name)
			if s == nil {
				errs = append(errs, fmt.Errorf("envFrom Secret %s does not exist", from.SecretRef.Name))
				continue
			}
			for k, v := range secretValues(s) {
				env[k] = v
			}
		}
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.ConfigMapKeyRef != nil:
			ref := e.ValueFrom.ConfigMapKeyRef
			o := m.find("ConfigMap", ref.Name)
			if o == nil {
				errs = append(errs, fmt.Errorf("env %s: ConfigMap %s does not exist", e.Name, ref.Name))
				continue
			}
			v, ok := o.Obj.(*corev1.ConfigMap).Data[ref.Key]
			if !ok {
				errs = append(errs, fmt.Errorf("env %s: ConfigMap %s has no key %s", e.Name, ref.Name, ref.Key))
			}
			env[e.Name] = v
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			s := m.secret(ref.Name)
			if s == nil {
				errs = append(errs, fmt.Errorf("env %s: Secret %s does not exist", e.Name, ref.Name))
				continue
			}
			v, ok := secretValues(s)[ref.Key]
			if !ok {
				errs = append(errs, fmt.Errorf("env %s: Secret %s has no key %s", e.Name, ref.Name, ref.Key))
			}
			env[e.Name] = v
		default:
			env[e.Name] = "" // from the pod's fields: known only at run time
		}
	}
	return env, errs
}

// Every variable the manifests set is one docs/configuration.md documents; secrets come only from
// Secrets; the Secret is a template with placeholders; and each container's environment is
// a configuration the binaries accept.
func TestEnvironment(t *testing.T) {
	m := manifests(t)
	documented := documentedVars(t)
	checkName := func(where, name string) {
		if _, ok := documented[name]; !ok {
			t.Errorf("%s: %s is not a variable of %s", where, name, configDoc)
		}
	}
	for _, o := range m.ofKind("ConfigMap") {
		cm := o.Obj.(*corev1.ConfigMap)
		if len(cm.BinaryData) > 0 {
			t.Errorf("%v: binaryData is not environment", o)
		}
		for k := range cm.Data {
			checkName(o.String(), k)
			if isSecretVar(k) {
				t.Errorf("%v: %s is a secret; it belongs in the Secret", o, k)
			}
		}
	}
	envSecrets := map[string]bool{}
	for _, c := range m.containers() {
		for _, from := range c.EnvFrom {
			if from.SecretRef != nil {
				envSecrets[from.SecretRef.Name] = true
			}
		}
		for _, e := range c.Env {
			checkName(c.String(), e.Name)
			if isSecretVar(e.Name) && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil) {
				t.Errorf("%s: %s is a secret; take it from a Secret", c, e.Name)
			}
		}
	}
	for _, o := range m.ofKind("Secret") {
		s := o.Obj.(*corev1.Secret)
		if len(s.Data) > 0 {
			t.Errorf("%v: data (base64) in a checked-in Secret: keep only stringData placeholders", o)
		}
		if !strings.HasSuffix(o.File, ".example.yaml") {
			t.Errorf("%v: a Secret belongs in a *.example.yaml template, kept out of the kustomizations", o)
		}
		for k, v := range s.StringData {
			if !strings.Contains(v, "REPLACE_ME") && !strings.Contains(v, "example") {
				t.Errorf("%v: %s=%q looks like a real value; a template holds placeholders (REPLACE_ME)", o, k, v)
			}
			if envSecrets[o.Meta.GetName()] {
				checkName(o.String(), k)
				if !isSecretVar(k) {
					t.Errorf("%v: %s is not a secret; it belongs in the ConfigMap", o, k)
				}
			}
		}
	}
	if s := m.secret("contentapi-secrets"); s != nil {
		want := []string{"ADMIN_TOKEN", "DATABASE_URL", "DATAFORSEO_LOGIN", "DATAFORSEO_PASSWORD", "REDIS_URL",
			"SMTP_URL", "STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET"}
		if got := sortedKeys(secretValues(s)); !slices.Equal(got, want) {
			t.Errorf("Secret contentapi-secrets has %v, want %v", got, want)
		}
	}

	for _, c := range m.containers() {
		env, errs := containerEnv(m, c.Container)
		for _, err := range errs {
			t.Errorf("%s: %v", c, err)
		}
		cfg, err := config.Load(func(k string) string { return env[k] })
		if err != nil {
			t.Errorf("%s: the binaries would refuse this environment: %v", c, err)
			continue
		}
		if _, err := app.RedisOptions(cfg); err != nil {
			t.Errorf("%s: %v", c, err)
		}
		if _, err := pgxpool.ParseConfig(cfg.DatabaseURL); err != nil {
			t.Errorf("%s: DATABASE_URL: %v", c, err)
		}
		if cfg.CrawlerAllowPrivate {
			t.Errorf("%s: CRAWLER_ALLOW_PRIVATE is true: the crawler could reach cluster and metadata addresses", c)
		}
	}
}

func addrPort(t *testing.T, addr string) int32 {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Errorf("address %q: %v", addr, err)
		return 0
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Errorf("address %q: %v", addr, err)
	}
	return int32(n)
}

// resolvePort turns a probe's or Service's port (number or name) into a container port.
func resolvePort(c corev1.Container, p intstr.IntOrString) (int32, bool) {
	for _, cp := range c.Ports {
		if (p.Type == intstr.String && cp.Name == p.StrVal) || (p.Type == intstr.Int && cp.ContainerPort == p.IntVal) {
			return cp.ContainerPort, true
		}
	}
	return 0, false
}

// effectiveConfig is the configuration a container would load.
func effectiveConfig(t *testing.T, m manifestSet, c corev1.Container) *config.Config {
	t.Helper()
	env, _ := containerEnv(m, c)
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("container %s: %v", c.Name, err)
	}
	return cfg
}

// checkProbe reports what is wrong with one probe: it must be an HTTP GET of path (which the
// binary serves) on port, the port the binary listens on. An exec probe could not run
// anyway: the distroless image has no shell or tools.
func checkProbe(c corev1.Container, kind string, p *corev1.Probe, routes map[string]bool, path string, port int32) error {
	switch {
	case p == nil:
		return fmt.Errorf("no %s probe", kind)
	case p.HTTPGet == nil:
		return fmt.Errorf("%s probe is not an HTTP GET of %s", kind, path)
	case p.HTTPGet.Path != path:
		return fmt.Errorf("%s probe asks %s, want %s", kind, p.HTTPGet.Path, path)
	case !routes[path]:
		return fmt.Errorf("%s probe asks %s, which the binary does not serve (it serves %v)", kind, path, sortedKeys(routes))
	}
	if got, ok := resolvePort(c, p.HTTPGet.Port); !ok || got != port {
		return fmt.Errorf("%s probe port %s is not the container port %d the binary listens on", kind, p.HTTPGet.Port.String(), port)
	}
	return nil
}

// Every Deployment's probes ask /readyz (readiness) and /healthz (liveness, startup), which
// its binary serves, on the port it listens on: API_ADDR's for the API, METRICS_ADDR's for
// the worker. The API's readiness waits out /readyz's 2 s dependency check. No hook runs a
// command: the distroless image has no shell or sleep.
func TestProbes(t *testing.T) {
	m := manifests(t)
	routes := map[string]map[string]bool{"api": apiRoutes(t), "worker": workerRoutes(t)}
	for _, c := range m.containers() {
		if c.obj.Kind != "Deployment" {
			continue
		}
		cfg := effectiveConfig(t, m, c.Container)
		addr, known := map[string]string{"api": cfg.APIAddr, "worker": cfg.MetricsAddr}[c.role]
		if !known || addr == "" {
			t.Errorf("%s: no binary runs as %q, or it listens on no port (API_ADDR, METRICS_ADDR)", c, c.role)
			continue
		}
		port := addrPort(t, addr)
		for _, p := range []struct {
			kind, path string
			probe      *corev1.Probe
		}{{"readiness", "/readyz", c.ReadinessProbe}, {"liveness", "/healthz", c.LivenessProbe}, {"startup", "/healthz", c.StartupProbe}} {
			if p.probe == nil && p.kind == "startup" {
				continue // optional
			}
			if err := checkProbe(c.Container, p.kind, p.probe, routes[c.role], p.path, port); err != nil {
				t.Errorf("%s: %v", c, err)
			}
		}
		if c.role == "api" && c.ReadinessProbe != nil && c.ReadinessProbe.TimeoutSeconds < 3 {
			t.Errorf("%s: readiness timeoutSeconds %d: /readyz may take its full 2 s dependency check", c, c.ReadinessProbe.TimeoutSeconds)
		}
		if c.Lifecycle != nil {
			for name, h := range map[string]*corev1.LifecycleHandler{"preStop": c.Lifecycle.PreStop, "postStart": c.Lifecycle.PostStart} {
				if h != nil && h.Exec != nil {
					t.Errorf("%s: %s runs a command: the distroless image has no shell or sleep (use the sleep action)", c, name)
				}
			}
		}
	}
}

// SIGTERM gets the time it needs: each Deployment's grace period covers its preStop sleep
// plus SHUTDOWN_TIMEOUT, so requests and tasks in flight finish. The API sleeps at least
// 5 s first (while the load balancer lets go of the pod), and its SHUTDOWN_TIMEOUT is at
// least SYNC_TIMEOUT, so calls waiting for their job are not cut.
func TestGracefulShutdown(t *testing.T) {
	m := manifests(t)
	const margin = 5 * time.Second
	for _, o := range m.ofKind("Deployment") {
		spec := o.Obj.(*appsv1.Deployment).Spec.Template.Spec
		if spec.TerminationGracePeriodSeconds == nil {
			t.Errorf("%v: terminationGracePeriodSeconds not set (the default 30 s is not SHUTDOWN_TIMEOUT)", o)
			continue
		}
		grace := time.Duration(*spec.TerminationGracePeriodSeconds) * time.Second
		for _, c := range spec.Containers {
			cfg := effectiveConfig(t, m, c)
			var sleep time.Duration
			if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
				sleep = time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
			}
			if need := sleep + cfg.ShutdownTimeout + margin; grace < need {
				t.Errorf("%v: terminationGracePeriodSeconds %s < preStop %s + SHUTDOWN_TIMEOUT %s + %s: work in flight is cut",
					o, grace, sleep, cfg.ShutdownTimeout, margin)
			}
			if roleOf(o.Meta.GetName()) != "api" {
				continue
			}
			if sleep < 5*time.Second {
				t.Errorf("%v: the API needs a preStop sleep (≥ 5 s) so endpoints drop it before SIGTERM", o)
			}
			if cfg.ShutdownTimeout < cfg.SyncTimeout {
				t.Errorf("%v: SHUTDOWN_TIMEOUT %s < SYNC_TIMEOUT %s: calls waiting for their job are cut at shutdown",
					o, cfg.ShutdownTimeout, cfg.SyncTimeout)
			}
		}
	}
}

// selects reports whether a label selector picks the pods of a template.
func selects(t *testing.T, sel *metav1.LabelSelector, podLabels map[string]string) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Errorf("selector %v: %v", sel, err)
		return false
	}
	return !s.Empty() && s.Matches(labels.Set(podLabels))
}

// Deployments select their own pods; autoscalers and disruption budgets point at real
// Deployments and never fight them over replicas; the worker scales on asynq's pending
// list of the analysis queue through KEDA, never down to zero.
func TestScaling(t *testing.T) {
	m := manifests(t)
	deployments := m.ofKind("Deployment")
	for _, o := range deployments {
		d := o.Obj.(*appsv1.Deployment)
		if !selects(t, d.Spec.Selector, d.Spec.Template.Labels) {
			t.Errorf("%v: its selector does not match its pod labels", o)
		}
		for _, other := range deployments {
			if other != o && selects(t, d.Spec.Selector, other.Obj.(*appsv1.Deployment).Spec.Template.Labels) {
				t.Errorf("%v: its selector also matches the pods of %v", o, other)
			}
		}
	}
	scaledTargets := map[string]int32{} // Deployment → minimum replicas
	target := func(o *object, apiVersion, kind, name string) *appsv1.Deployment {
		if (apiVersion != "" && apiVersion != "apps/v1") || (kind != "" && kind != "Deployment") {
			t.Errorf("%v: scales %s %s, want an apps/v1 Deployment", o, apiVersion, kind)
			return nil
		}
		d := m.deployment(name)
		if d == nil {
			t.Errorf("%v: scales Deployment %s, which does not exist", o, name)
		}
		return d
	}
	for _, o := range m.ofKind("HorizontalPodAutoscaler") {
		h := o.Obj.(*autoscalingv2.HorizontalPodAutoscaler)
		ref := h.Spec.ScaleTargetRef
		d := target(o, ref.APIVersion, ref.Kind, ref.Name)
		minReplicas := int32(1)
		if h.Spec.MinReplicas != nil {
			minReplicas = *h.Spec.MinReplicas
		}
		if minReplicas < 1 || h.Spec.MaxReplicas < minReplicas {
			t.Errorf("%v: replicas %d..%d", o, minReplicas, h.Spec.MaxReplicas)
		}
		if ref.Name == "contentapi-api" && minReplicas < 2 {
			t.Errorf("%v: minReplicas %d: the API should survive losing one pod", o, minReplicas)
		}
		if optionalFile(o.File) {
			continue // an alternative to the ScaledObject
		}
		scaledTargets[ref.Name] = minReplicas
		for _, metric := range h.Spec.Metrics {
			if metric.Type == autoscalingv2.ResourceMetricSourceType && metric.Resource != nil && d != nil {
				for _, c := range d.Spec.Template.Spec.Containers {
					if _, ok := c.Resources.Requests[metric.Resource.Name]; !ok {
						t.Errorf("%v: scales on %s utilization, but container %s requests no %s", o, metric.Resource.Name, c.Name, metric.Resource.Name)
					}
				}
			}
		}
		if len(h.Spec.Metrics) == 0 {
			t.Errorf("%v: no metrics", o)
		}
	}
	for _, o := range m.ofKind("ScaledObject") {
		so := o.Obj.(*scaledObject)
		ref := so.Spec.ScaleTargetRef
		target(o, ref.APIVersion, ref.Kind, ref.Name)
		if so.Spec.MinReplicaCount == nil || *so.Spec.MinReplicaCount < 1 {
			t.Errorf("%v: minReplicaCount must be at least 1: the job sweep and periodic renewals run in the workers", o)
		} else {
			scaledTargets[ref.Name] = *so.Spec.MinReplicaCount
		}
		if so.Spec.IdleReplicaCount != nil && *so.Spec.IdleReplicaCount == 0 {
			t.Errorf("%v: idleReplicaCount 0 scales the workers to zero", o)
		}
		if so.Spec.MaxReplicaCount == nil || so.Spec.MinReplicaCount == nil || *so.Spec.MaxReplicaCount < *so.Spec.MinReplicaCount {
			t.Errorf("%v: maxReplicaCount must be set and at least minReplicaCount", o)
		}
		checkRedisTrigger(t, m, o, so)
	}
	if _, ok := scaledTargets["contentapi-worker"]; !ok {
		t.Error("nothing applied by kustomize scales contentapi-worker")
	}
	for _, o := range deployments {
		if _, ok := scaledTargets[o.Meta.GetName()]; ok && o.Obj.(*appsv1.Deployment).Spec.Replicas != nil {
			t.Errorf("%v: sets replicas although an autoscaler owns them (each apply would reset the count)", o)
		}
	}
	for _, o := range m.ofKind("PodDisruptionBudget") {
		pdb := o.Obj.(*policyv1.PodDisruptionBudget)
		var matched []string
		for _, d := range deployments {
			if selects(t, pdb.Spec.Selector, d.Obj.(*appsv1.Deployment).Spec.Template.Labels) {
				matched = append(matched, d.Meta.GetName())
			}
		}
		if len(matched) != 1 {
			t.Errorf("%v: selects the pods of %v, want exactly one Deployment", o, matched)
			continue
		}
		switch {
		case pdb.Spec.MaxUnavailable != nil:
			if pdb.Spec.MaxUnavailable.Type == intstr.Int && pdb.Spec.MaxUnavailable.IntVal < 1 {
				t.Errorf("%v: maxUnavailable 0 blocks every node drain", o)
			}
		case pdb.Spec.MinAvailable != nil:
			if min, ok := scaledTargets[matched[0]]; ok && pdb.Spec.MinAvailable.Type == intstr.Int && pdb.Spec.MinAvailable.IntVal >= min {
				t.Errorf("%v: minAvailable %d with as few as %d replicas blocks node drains", o, pdb.Spec.MinAvailable.IntVal, min)
			}
		default:
			t.Errorf("%v: neither maxUnavailable nor minAvailable", o)
		}
	}
}

// checkRedisTrigger checks the KEDA redis trigger against asynq's key layout, the worker's
// queues and the Redis the application uses.
func checkRedisTrigger(t *testing.T, m manifestSet, o *object, so *scaledObject) {
	t.Helper()
	if len(so.Spec.Triggers) != 1 || so.Spec.Triggers[0].Type != "redis" {
		t.Errorf("%v: want one trigger of type redis (asynq's pending list)", o)
		return
	}
	tr := so.Spec.Triggers[0]
	for k := range tr.Metadata {
		if !slices.Contains(redisTriggerMetadata, k) {
			t.Errorf("%v: redis trigger metadata %q is not a parameter of KEDA's redis scaler", o, k)
		}
	}
	// asynq keeps a queue's waiting tasks in the list QueueKeyPrefix(q)+"pending"; check the
	// layout in the asynq version this module builds with.
	src := asynqBaseSource(t)
	if !strings.Contains(src, `return "asynq:{" + qname + "}:"`) || !strings.Contains(src, `return QueueKeyPrefix(qname) + "pending"`) {
		t.Errorf("asynq's internal/base no longer names the pending list asynq:{<queue>}:pending; update listName")
	}
	if _, ok := jobs.Queues[jobs.QueueAnalysis]; !ok {
		t.Errorf("jobs.Queues has no %q queue", jobs.QueueAnalysis)
	}
	for q, w := range jobs.Queues {
		if w > jobs.Queues[jobs.QueueAnalysis] {
			t.Errorf("queue %s outweighs %s: scale on it instead", q, jobs.QueueAnalysis)
		}
	}
	if want := "asynq:{" + jobs.QueueAnalysis + "}:pending"; tr.Metadata["listName"] != want {
		t.Errorf("%v: listName %q, want %q", o, tr.Metadata["listName"], want)
	}
	if n, err := strconv.Atoi(tr.Metadata["listLength"]); err != nil || n < 1 {
		t.Errorf("%v: listLength %q, want a positive whole number", o, tr.Metadata["listLength"])
	}
	params := map[string]string{}
	if tr.AuthenticationRef != nil {
		if tr.AuthenticationRef.Kind != "" && tr.AuthenticationRef.Kind != "TriggerAuthentication" {
			t.Errorf("%v: authenticationRef kind %s", o, tr.AuthenticationRef.Kind)
		}
		ao := m.find("TriggerAuthentication", tr.AuthenticationRef.Name)
		if ao == nil {
			t.Errorf("%v: TriggerAuthentication %s does not exist", o, tr.AuthenticationRef.Name)
			return
		}
		for _, ref := range ao.Obj.(*triggerAuthentication).Spec.SecretTargetRef {
			if !slices.Contains(redisAuthParameters, ref.Parameter) {
				t.Errorf("%v: parameter %q is not one KEDA's redis scaler reads", ao, ref.Parameter)
			}
			s := m.secret(ref.Name)
			if s == nil {
				t.Errorf("%v: Secret %s does not exist", ao, ref.Name)
				continue
			}
			v, ok := secretValues(s)[ref.Key]
			if !ok {
				t.Errorf("%v: Secret %s has no key %s", ao, ref.Name, ref.Key)
			}
			params[ref.Parameter] = v
		}
	}
	address := tr.Metadata["address"]
	if a, ok := params["address"]; ok {
		address = a
	}
	if address == "" && tr.Metadata["addressFromEnv"] == "" && tr.Metadata["host"] == "" && params["host"] == "" {
		t.Errorf("%v: the redis trigger has no address", o)
	}
	// The template's address and database must be REDIS_URL's.
	s := m.secret("contentapi-secrets")
	if s == nil {
		return
	}
	u, err := url.Parse(secretValues(s)["REDIS_URL"])
	if err != nil {
		t.Errorf("REDIS_URL: %v", err)
		return
	}
	db := strings.Trim(u.Path, "/")
	if db == "" {
		db = "0"
	}
	if got := tr.Metadata["databaseIndex"]; got != db && !(got == "" && db == "0") {
		t.Errorf("%v: databaseIndex %q, but REDIS_URL uses database %s", o, got, db)
	}
	host := u.Host
	if u.Port() == "" {
		host += ":6379"
	}
	if address != "" && address != host {
		t.Errorf("%v: address %s, but REDIS_URL is on %s", o, address, host)
	}
	if tls := u.Scheme == "rediss"; tls != (tr.Metadata["enableTLS"] == "true" || params["tls"] == "enable") {
		t.Errorf("%v: REDIS_URL is %s:// but the trigger's TLS setting disagrees", o, u.Scheme)
	}
}

// asynqBaseSource reads internal/base/base.go of the asynq module this repository builds with.
func asynqBaseSource(t *testing.T) string {
	t.Helper()
	out, err := goCommand("list", "-m", "-f", "{{.Dir}}", "github.com/hibiken/asynq")
	if err != nil {
		t.Fatalf("go list -m github.com/hibiken/asynq: %v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(strings.TrimSpace(out), "internal", "base", "base.go"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The Service reaches the API pods on their HTTP port, network policies let that port (and
// nothing else) in, and the optional egress policies keep the crawler off private networks.
func TestServiceAndNetworkPolicies(t *testing.T) {
	m := manifests(t)
	api := m.deployment("contentapi-api")
	worker := m.deployment("contentapi-worker")
	if api == nil || worker == nil {
		t.Fatal("the api and worker Deployments are missing")
	}
	apiC, workerC := api.Spec.Template.Spec.Containers[0], worker.Spec.Template.Spec.Containers[0]
	apiPort := addrPort(t, effectiveConfig(t, m, apiC).APIAddr)
	metricsPort := addrPort(t, effectiveConfig(t, m, workerC).MetricsAddr)
	for _, o := range m.ofKind("Service") {
		svc := o.Obj.(*corev1.Service)
		sel := &metav1.LabelSelector{MatchLabels: svc.Spec.Selector}
		if !selects(t, sel, api.Spec.Template.Labels) || selects(t, sel, worker.Spec.Template.Labels) {
			t.Errorf("%v: should select the API pods and only them", o)
		}
		for _, p := range svc.Spec.Ports {
			if port, ok := resolvePort(apiC, p.TargetPort); !ok || port != apiPort {
				t.Errorf("%v: port %s targets %s, not the API's port %d", o, p.Name, p.TargetPort.String(), apiPort)
			}
		}
	}
	pods := map[string]map[string]string{"api": api.Spec.Template.Labels, "worker": worker.Spec.Template.Labels}
	for _, o := range m.ofKind("NetworkPolicy") {
		np := o.Obj.(*networkingv1.NetworkPolicy)
		sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		if err != nil {
			t.Errorf("%v: %v", o, err)
			continue
		}
		var selected []string
		for role, l := range pods {
			if sel.Matches(labels.Set(l)) {
				selected = append(selected, role)
			}
		}
		if len(selected) == 0 {
			t.Errorf("%v: selects no contentapi pods", o)
		}
		for _, rule := range np.Spec.Ingress {
			for _, p := range rule.Ports {
				switch {
				case p.Port == nil:
					t.Errorf("%v: an ingress rule opens every port", o)
				case slices.Equal(selected, []string{"api"}) && p.Port.IntVal != apiPort:
					t.Errorf("%v: lets in port %s; the API listens on %d", o, p.Port.String(), apiPort)
				case slices.Equal(selected, []string{"worker"}) && p.Port.IntVal != metricsPort:
					t.Errorf("%v: lets in port %s; the worker serves metrics on %d", o, p.Port.String(), metricsPort)
				}
			}
			if len(rule.Ports) == 0 {
				t.Errorf("%v: an ingress rule opens every port", o)
			}
		}
		checkEgress(t, o, np, selected)
	}
	// The loop above checks the ports each rule opens; a policy with no rule lets nothing in.
	if np := m.find("NetworkPolicy", "contentapi-api-ingress"); np != nil && len(np.Obj.(*networkingv1.NetworkPolicy).Spec.Ingress) == 0 {
		t.Errorf("%v: no ingress rule: nothing reaches the API's port %d", np, apiPort)
	}
	if m.find("NetworkPolicy", "contentapi-worker-egress") == nil {
		t.Error("no egress policy for the worker (networkpolicy-egress.optional.yaml)")
	}
}

// private are the ranges a crawler must never reach: cluster, node and VPC networks,
// carrier NAT, link-local (cloud metadata) and loopback.
var private = []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16", "127.0.0.0/8", "fc00::/7", "fe80::/10"}

func checkEgress(t *testing.T, o *object, np *networkingv1.NetworkPolicy, selected []string) {
	t.Helper()
	for _, rule := range np.Spec.Egress {
		if len(rule.Ports) == 0 {
			t.Errorf("%v: an egress rule opens every port", o)
		}
		for _, peer := range rule.To {
			if peer.IPBlock == nil {
				continue
			}
			_, cidr, err := net.ParseCIDR(peer.IPBlock.CIDR)
			if err != nil {
				t.Errorf("%v: %v", o, err)
				continue
			}
			for _, e := range peer.IPBlock.Except {
				ip, _, err := net.ParseCIDR(e)
				if err != nil || !cidr.Contains(ip) {
					t.Errorf("%v: except %s is not inside %s", o, e, peer.IPBlock.CIDR)
				}
			}
			ones, _ := cidr.Mask.Size()
			if ones != 0 {
				continue // a specific network (the databases)
			}
			// The open internet: the private ranges of that family must be excluded.
			for _, p := range private {
				_, pn, _ := net.ParseCIDR(p)
				if (pn.IP.To4() == nil) == (cidr.IP.To4() == nil) && !slices.Contains(peer.IPBlock.Except, p) {
					t.Errorf("%v: %s without excepting %s", o, peer.IPBlock.CIDR, p)
				}
			}
			for _, p := range rule.Ports {
				if p.Port == nil || (p.Port.IntVal != 80 && p.Port.IntVal != 443) {
					t.Errorf("%v: the internet is open beyond ports 80 and 443", o)
				}
			}
			if slices.Contains(selected, "api") && slices.ContainsFunc(rule.Ports, func(p networkingv1.NetworkPolicyPort) bool {
				return p.Port != nil && p.Port.IntVal == 80
			}) {
				t.Errorf("%v: the API calls only Stripe, over HTTPS", o)
			}
		}
	}
}

// The optional Prometheus Operator objects scrape paths the binaries serve, on their
// ports, with ADMIN_TOKEN for the API.
func TestMonitoring(t *testing.T) {
	m := manifests(t)
	api, worker := apiRoutes(t), workerRoutes(t)
	svc := m.find("Service", "contentapi-api")
	for _, o := range m.ofKind("ServiceMonitor") {
		sm := o.Obj.(*serviceMonitor)
		if svc == nil || !selects(t, &sm.Spec.Selector, svc.Meta.GetLabels()) {
			t.Errorf("%v: does not select the Service contentapi-api", o)
			continue
		}
		for _, ep := range sm.Spec.Endpoints {
			if !slices.ContainsFunc(svc.Obj.(*corev1.Service).Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == ep.Port }) {
				t.Errorf("%v: port %q is not a port of the Service", o, ep.Port)
			}
			if !api[ep.Path] {
				t.Errorf("%v: path %s is not served by the API", o, ep.Path)
			}
			if ep.Authorization == nil || ep.Authorization.Credentials == nil {
				t.Errorf("%v: the API's %s needs ADMIN_TOKEN as a bearer token", o, ep.Path)
				continue
			}
			cred := ep.Authorization.Credentials
			if s := m.secret(cred.Name); s == nil || cred.Key != "ADMIN_TOKEN" {
				t.Errorf("%v: credentials %s/%s, want the ADMIN_TOKEN of the app's Secret", o, cred.Name, cred.Key)
			}
		}
	}
	for _, o := range m.ofKind("PodMonitor") {
		pm := o.Obj.(*podMonitor)
		d := m.deployment("contentapi-worker")
		if d == nil || !selects(t, &pm.Spec.Selector, d.Spec.Template.Labels) {
			t.Errorf("%v: does not select the worker pods", o)
			continue
		}
		for _, ep := range pm.Spec.PodMetricsEndpoints {
			if _, ok := resolvePort(d.Spec.Template.Spec.Containers[0], intstr.FromString(ep.Port)); !ok {
				t.Errorf("%v: port %q is not a port of the worker", o, ep.Port)
			}
			if !worker[ep.Path] {
				t.Errorf("%v: path %s is not served by the worker", o, ep.Path)
			}
		}
	}
}

type composeService struct {
	Build *struct {
		Context    string `json:"context"`
		Dockerfile string `json:"dockerfile"`
		Target     string `json:"target"`
	} `json:"build"`
	Image       string       `json:"image"`
	Command     stringOrList `json:"command"`
	Environment composeEnv   `json:"environment"`
}

// stringOrList is a compose command: a list, or one string split on spaces.
type stringOrList []string

func (s *stringOrList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = strings.Fields(one)
		return nil
	}
	return json.Unmarshal(b, (*[]string)(s))
}

// composeEnv is a compose environment: a map, or a list of NAME=value.
type composeEnv map[string]string

func (e *composeEnv) UnmarshalJSON(b []byte) error {
	var list []string
	if err := json.Unmarshal(b, &list); err == nil {
		*e = composeEnv{}
		for _, kv := range list {
			k, v, _ := strings.Cut(kv, "=")
			(*e)[k] = v
		}
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*e = composeEnv{}
	for k, v := range m {
		(*e)[k] = fmt.Sprint(v)
	}
	return nil
}

func composeServices(t *testing.T) map[string]composeService {
	t.Helper()
	var compose struct {
		Services map[string]composeService `json:"services"`
	}
	if err := yaml.Unmarshal([]byte(readRepoFile(t, "docker-compose.yml")), &compose); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return compose.Services
}

// docker-compose.yml parses, runs the expected services, builds them from the Dockerfile's
// targets, and gives asynq a Redis that neither evicts nor forgets.
func TestDockerCompose(t *testing.T) {
	services := composeServices(t)
	stages := dockerStages(t)
	documented := documentedVars(t)
	for _, want := range []string{"postgres", "redis", "api", "worker", "asynqmon"} {
		if _, ok := services[want]; !ok {
			t.Errorf("docker-compose.yml has no service %s (has %v)", want, sortedKeys(services))
		}
	}
	built := map[string]bool{}
	for name, s := range services {
		if s.Build != nil {
			built[s.Build.Target] = true
			if s.Build.Dockerfile != "deploy/"+dockerfile {
				t.Errorf("docker-compose.yml %s: builds %s, want deploy/%s", name, s.Build.Dockerfile, dockerfile)
			}
			if _, ok := stages[s.Build.Target]; !ok || (!slices.Contains(targets, s.Build.Target) && s.Build.Target != renderTarget) {
				t.Errorf("docker-compose.yml %s: target %q is not an image target of the Dockerfile", name, s.Build.Target)
			}
			for k := range s.Environment {
				if _, ok := documented[k]; !ok {
					t.Errorf("docker-compose.yml %s: %s is not a variable of %s", name, k, configDoc)
				}
			}
		}
	}
	// The worker renders JavaScript there (rendered audits would answer 503 without a
	// browser); the plain worker image is for clusters.
	built["worker"] = built["worker"] || built[renderTarget]
	for _, target := range targets {
		if !built[target] {
			t.Errorf("docker-compose.yml builds no %s image", target)
		}
	}
	for name, want := range map[string]bool{"worker": true, "api": false} {
		if s, ok := services[name]; ok && s.Build != nil && hasChromium(stages[s.Build.Target]) != want {
			t.Errorf("docker-compose.yml %s: target %s; Chromium and CHROME_PATH in it: %v, want %v", name, s.Build.Target, !want, want)
		}
	}
	if r, ok := services["redis"]; ok {
		cmd := strings.Join(r.Command, " ")
		if !strings.Contains(cmd, "--maxmemory-policy noeviction") || !strings.Contains(cmd, "--appendonly yes") {
			t.Errorf("docker-compose.yml redis: command %q should set --appendonly yes and --maxmemory-policy noeviction", cmd)
		}
	}
}

// The build context filter next to the Dockerfile keeps secrets and build output out without
// dropping anything the build needs. It is read with moby/patternmatcher, the matcher
// BuildKit applies to it.
func TestDockerignore(t *testing.T) {
	patterns, err := ignorefile.ReadAll(strings.NewReader(readRepoFile(t, "deploy/"+dockerfile+".dockerignore")))
	if err != nil {
		t.Fatal(err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		t.Fatal(err)
	}
	excluded := func(p string) bool {
		ok, err := pm.MatchesOrParentMatches(p)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	needed := []string{"go.mod", "go.sum", "client/go.mod"}
	for _, dir := range []string{"cmd", "internal", "jobs"} {
		err := filepath.WalkDir(filepath.Join(repoRoot, dir), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(repoRoot, p)
				needed = append(needed, filepath.ToSlash(rel))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range needed {
		if excluded(p) {
			t.Errorf("Dockerfile.dockerignore leaves %s out of the build", p)
		}
	}
	for _, p := range []string{".git/HEAD", ".env", "deploy/.env", "deploy/kubernetes/secret.example.yaml"} {
		if !excluded(p) {
			t.Errorf("Dockerfile.dockerignore: %s is sent to the build", p)
		}
	}
}

// deploy/README.md tells the operator how to build each image, names every manifest, and
// gives the Stripe webhook URL and the events it must send.
func TestOperatorREADME(t *testing.T) {
	readme := readRepoFile(t, "deploy/README.md")
	for _, target := range targets {
		if !strings.Contains(readme, "docker build -f deploy/Dockerfile --target "+target) {
			t.Errorf("deploy/README.md: no build command for the %s image", target)
		}
	}
	m := manifests(t)
	for _, f := range m.files {
		if !strings.Contains(readme, path.Base(f)) {
			t.Errorf("deploy/README.md does not mention %s", f)
		}
	}
	server := readRepoFile(t, "internal/httpapi/server.go")
	webhook := regexp.MustCompile(`webhookPath\s*=\s*"([^"]+)"`).FindStringSubmatch(server)
	if webhook == nil {
		t.Fatal("internal/httpapi/server.go: no webhookPath")
	}
	if !strings.Contains(readme, webhook[1]) {
		t.Errorf("deploy/README.md: no Stripe webhook URL (%s)", webhook[1])
	}
	events := served(t, "internal/billing", regexp.MustCompile(`\bEvent[A-Za-z]+\s*=\s*"([a-z_.]+)"`))
	if len(events) == 0 {
		t.Error("internal/billing: no Event constants found")
	}
	for e := range events {
		if !strings.Contains(readme, e) {
			t.Errorf("deploy/README.md: the webhook event %s is not listed", e)
		}
	}
}
