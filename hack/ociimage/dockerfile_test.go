package main

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func parseFile(t *testing.T, path string) *Dockerfile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := ParseDockerfile(f, nil)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return d
}

func finalConfig(t *testing.T, path string) *Image {
	t.Helper()
	img, err := BuildFinal(parseFile(t, path), Options{SkipLayers: true})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

// The image the cluster test runs is configured by the repository's
// Dockerfile, and the Dockerfile says what production runs: these are the
// promises the chart and the operator rely on.
func TestRepoDockerfileConfig(t *testing.T) {
	t.Parallel()
	img := finalConfig(t, "../../Dockerfile")
	c := img.Config
	if img.Base != "gcr.io/distroless/static-debian12:nonroot" {
		t.Errorf("base %q", img.Base)
	}
	if c.User != "65532:65532" {
		t.Errorf("User %q, want 65532:65532 (runAsNonRoot needs a numeric user)", c.User)
	}
	if !reflect.DeepEqual(c.Entrypoint, []string{"/fairplay"}) {
		t.Errorf("Entrypoint %q", c.Entrypoint)
	}
	if !reflect.DeepEqual(c.Cmd, []string{"serve"}) {
		t.Errorf("Cmd %q", c.Cmd)
	}
	if want := map[string]struct{}{"8080/tcp": {}, "9090/tcp": {}}; !reflect.DeepEqual(c.ExposedPorts, want) {
		t.Errorf("ExposedPorts %v, want %v", c.ExposedPorts, want)
	}
	if c.WorkingDir != "/home/nonroot" {
		t.Errorf("WorkingDir %q", c.WorkingDir)
	}
	if len(c.Env) == 0 || c.Env[0] != defaultPath {
		t.Errorf("Env %q, want PATH first", c.Env)
	}
	if c.Labels["org.opencontainers.image.title"] != "fairplay" || c.Labels["org.opencontainers.image.source"] == "" {
		t.Errorf("Labels %v", c.Labels)
	}
	var copies []string
	for _, h := range img.History {
		if strings.HasPrefix(h.CreatedBy, "COPY") {
			copies = append(copies, h.CreatedBy)
		}
	}
	want := []string{"COPY --from=build /out/fairplay /fairplay", "COPY --from=build /out/operator /operator"}
	if !reflect.DeepEqual(copies, want) {
		t.Errorf("COPY lines %q, want %q", copies, want)
	}
}

// hack/image.sh runs the Dockerfile's build and web stages itself; it must run
// the same commands.
func TestImageScriptRunsTheDockerfileStages(t *testing.T) {
	t.Parallel()
	d := parseFile(t, "../../Dockerfile")
	script, err := os.ReadFile("../image.sh")
	if err != nil {
		t.Fatal(err)
	}
	web, err := os.ReadFile("../web.sh")
	if err != nil {
		t.Fatal(err)
	}

	build := d.StageNamed("build")
	if build == nil {
		t.Fatal("no build stage")
	}
	goBuild := regexp.MustCompile(`go build (.+?) -o /out/(\S+) (\S+)`)
	var builds int
	cgoOff := false
	for _, in := range build.Instructions {
		if in.Cmd == "ENV" && strings.Contains(in.Args, "CGO_ENABLED=0") {
			cgoOff = true
		}
		if in.Cmd != "RUN" {
			continue
		}
		for _, m := range goBuild.FindAllStringSubmatch(in.Args, -1) {
			builds++
			want := `go build ` + m[1] + ` -o "$stage/out/` + m[2] + `" ` + m[3]
			if !strings.Contains(string(script), want) {
				t.Errorf("hack/image.sh lacks the Dockerfile's build line:\n  %s", want)
			}
		}
	}
	if builds != 2 {
		t.Errorf("found %d go build lines in the build stage, want 2", builds)
	}
	if !cgoOff || !strings.Contains(string(script), "export CGO_ENABLED=0") {
		t.Errorf("CGO_ENABLED=0 in the Dockerfile (%v) and in hack/image.sh", cgoOff)
	}

	stage := d.StageNamed("web")
	if stage == nil {
		t.Fatal("no web stage")
	}
	for _, in := range stage.Instructions {
		if in.Cmd != "RUN" {
			continue
		}
		for _, cmd := range []string{"npm ci --no-audit --no-fund", "npm run build"} {
			if strings.Contains(in.Args, cmd) && !strings.Contains(string(web), cmd) {
				t.Errorf("hack/web.sh lacks the web stage's %q", cmd)
			}
		}
	}
}

func TestPauseDockerfile(t *testing.T) {
	t.Parallel()
	img := finalConfig(t, "../pause/Dockerfile")
	if img.Base != "scratch" || img.Config.User != "65535:65535" || !reflect.DeepEqual(img.Config.Entrypoint, []string{"/pause"}) || img.Config.Cmd != nil {
		t.Errorf("pause image: base %q, config %+v", img.Base, img.Config)
	}
	if len(img.Layers) != 1 {
		t.Errorf("%d layers, want the one COPY", len(img.Layers))
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		args    map[string]string
		check   func(*testing.T, *Image)
		wantErr string
	}{
		{
			name: "continuations, comments and quoting",
			in: `# syntax=docker/dockerfile:1
ARG BASE=scratch
FROM ${BASE}
LABEL a="one two" \
      # a comment inside the continuation
      b=three\ four 'c'='x"y'
ENV HOME=/home/me GREETING="hi $HOME"
ENV GREETING="hi $HOME"
ENV LEGACY the rest of the line
USER 1000:1000
EXPOSE 80 53/udp
WORKDIR /home/me
WORKDIR app
STOPSIGNAL SIGINT
CMD ["x"]
`,
			check: func(t *testing.T, img *Image) {
				c := img.Config
				if want := map[string]string{"a": "one two", "b": "three four", "c": `x"y`}; !reflect.DeepEqual(c.Labels, want) {
					t.Errorf("labels %q, want %q", c.Labels, want)
				}
				if want := []string{defaultPath, "HOME=/home/me", "GREETING=hi /home/me", "LEGACY=the rest of the line"}; !reflect.DeepEqual(c.Env, want) {
					t.Errorf("env %q, want %q", c.Env, want)
				}
				if c.User != "1000:1000" || c.WorkingDir != "/home/me/app" || c.StopSignal != "SIGINT" {
					t.Errorf("config %+v", c)
				}
				if want := map[string]struct{}{"80/tcp": {}, "53/udp": {}}; !reflect.DeepEqual(c.ExposedPorts, want) {
					t.Errorf("ports %v", c.ExposedPorts)
				}
			},
		},
		{
			name: "build args reach FROM and stage ARGs",
			in:   "ARG V=bad\nFROM scratch\nARG V\nLABEL v=$V w=${UNSET:-dflt}\n",
			args: map[string]string{"V": "good"},
			check: func(t *testing.T, img *Image) {
				if img.Config.Labels["v"] != "good" || img.Config.Labels["w"] != "dflt" {
					t.Errorf("labels %v", img.Config.Labels)
				}
			},
		},
		{
			name: "only the last stage counts",
			in:   "FROM scratch AS a\nUSER 1\nFROM scratch\nENTRYPOINT [\"/b\"]\n",
			check: func(t *testing.T, img *Image) {
				if img.Config.User != "" || !reflect.DeepEqual(img.Config.Entrypoint, []string{"/b"}) {
					t.Errorf("config %+v", img.Config)
				}
			},
		},
		{
			name: "a CMD before ENTRYPOINT in the same stage stays",
			in:   "FROM scratch\nCMD [\"a\"]\nENTRYPOINT [\"/b\"]\n",
			check: func(t *testing.T, img *Image) {
				if !reflect.DeepEqual(img.Config.Cmd, []string{"a"}) {
					t.Errorf("cmd %q", img.Config.Cmd)
				}
			},
		},
		{name: "shell form needs a shell", in: "FROM scratch\nENTRYPOINT /x\n", wantErr: "exec (JSON) form"},
		{name: "RUN in the final stage", in: "FROM scratch\nRUN true\n", wantErr: "not supported without a builder"},
		{name: "unknown base", in: "FROM debian:12\n", wantErr: "no stand-in"},
		{name: "instruction before FROM", in: "LABEL a=b\nFROM scratch\n", wantErr: "before the first FROM"},
		{name: "bad port", in: "FROM scratch\nEXPOSE http\n", wantErr: "bad port"},
		{name: "unterminated quote", in: "FROM scratch\nLABEL a=\"b\n", wantErr: "unterminated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := ParseDockerfile(strings.NewReader(tt.in), tt.args)
			var img *Image
			if err == nil {
				img, err = BuildFinal(d, Options{SkipLayers: true, BuildArgs: tt.args})
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, img)
		})
	}
}
