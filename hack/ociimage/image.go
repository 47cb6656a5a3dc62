package main

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ImageConfig is the "config" object of an OCI image configuration, in the
// field order and spelling of the spec.
type ImageConfig struct {
	User         string              `json:"User,omitempty"`
	ExposedPorts map[string]struct{} `json:"ExposedPorts,omitempty"`
	Env          []string            `json:"Env,omitempty"`
	Entrypoint   []string            `json:"Entrypoint,omitempty"`
	Cmd          []string            `json:"Cmd,omitempty"`
	Volumes      map[string]struct{} `json:"Volumes,omitempty"`
	WorkingDir   string              `json:"WorkingDir,omitempty"`
	Labels       map[string]string   `json:"Labels,omitempty"`
	StopSignal   string              `json:"StopSignal,omitempty"`
}

// History is one entry of the image's build history.
type History struct {
	Created    string `json:"created,omitempty"`
	CreatedBy  string `json:"created_by,omitempty"`
	Comment    string `json:"comment,omitempty"`
	EmptyLayer bool   `json:"empty_layer,omitempty"`
}

// Entry is one file, directory or symlink of a layer. Path is relative to
// the root, without a leading slash.
type Entry struct {
	Path     string
	Mode     fs.FileMode // type bits and permissions, including setuid/setgid/sticky
	UID, GID int
	Data     []byte // a regular file's content, when Src is empty
	Src      string // a host file to read a regular file's content from
	Link     string // a symlink's target
}

// Layer is a set of entries and the history line that made it.
type Layer struct {
	Entries   []Entry
	CreatedBy string
	Comment   string
}

// Options say where the final stage's COPY sources live on this host.
type Options struct {
	Context    string            // the build context (COPY without --from)
	Stages     map[string]string // stage name -> a host directory standing for that stage's root
	HostRoot   string            // where the base stand-ins read the host's Debian files ("/" normally)
	BuildArgs  map[string]string
	SkipLayers bool // interpret the instructions for the config only
}

// Image is the final stage turned into a config and layers.
type Image struct {
	Base    string
	Config  ImageConfig
	Layers  []Layer
	History []History // one per instruction; layers line up with the non-empty ones
}

// BuildFinal interprets the Dockerfile's final stage on top of a stand-in for
// its base image: LABEL, ENV, ARG, USER, WORKDIR, EXPOSE, VOLUME, STOPSIGNAL,
// ENTRYPOINT and CMD set the config as `docker build` would; COPY becomes a
// layer. Anything that needs a builder to run (RUN, ADD, ONBUILD, SHELL,
// HEALTHCHECK) is refused, so the Dockerfile cannot drift from what this
// program proves without the test failing.
func BuildFinal(d *Dockerfile, opts Options) (*Image, error) {
	st := d.Final()
	baseName, _, _ := strings.Cut(st.From, "@") // a pinned digest names the same stand-in
	base, ok := bases[baseName]
	if !ok {
		return nil, fmt.Errorf("line %d: FROM %s: no stand-in for this base (known: %s)", st.Line, st.From, strings.Join(knownBases(), ", "))
	}
	img := &Image{Base: baseName, Config: base.Config}
	img.Config.Env = append([]string(nil), base.Config.Env...)
	if base.Entries != nil {
		var entries []Entry
		if !opts.SkipLayers {
			var err error
			if entries, err = base.Entries(opts.HostRoot); err != nil {
				return nil, fmt.Errorf("base %s: %w", baseName, err)
			}
		}
		img.Layers = append(img.Layers, Layer{Entries: entries, CreatedBy: "stand-in for " + st.From, Comment: base.Comment})
		img.History = append(img.History, History{CreatedBy: "stand-in for " + st.From, Comment: base.Comment})
	}

	// What the lower layers hold, so COPY only adds the parents that are missing
	// (and never resets the base's /home/nonroot, say).
	have := map[string]bool{"": true}
	for _, l := range img.Layers {
		for _, e := range l.Entries {
			have[e.Path] = true
		}
	}

	args := map[string]string{}
	for _, in := range d.GlobalArgs {
		name, def, hasDef := strings.Cut(in.Args, "=")
		if hasDef {
			args[name] = unquote(def)
		}
	}
	stageArgs := map[string]string{}
	lookup := func(k string) (string, bool) {
		for i := len(img.Config.Env) - 1; i >= 0; i-- {
			if name, v, _ := strings.Cut(img.Config.Env[i], "="); name == k {
				return v, true
			}
		}
		v, ok := stageArgs[k]
		return v, ok
	}
	cmdSet := false // a CMD in this stage survives a later ENTRYPOINT

	for _, in := range st.Instructions {
		where := fmt.Sprintf("line %d: %s", in.Line, in.Cmd)
		createdBy := in.Cmd + " " + in.Args
		empty := true
		switch in.Cmd {
		case "ARG":
			words, err := splitWords(in.Args, lookup)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			for _, w := range words {
				name, def, hasDef := strings.Cut(w, "=")
				switch v, ok := opts.BuildArgs[name]; {
				case ok:
					stageArgs[name] = v
				case hasDef:
					stageArgs[name] = def
				default:
					if g, ok := args[name]; ok {
						stageArgs[name] = g
					}
				}
			}
			continue // ARG leaves no history in the image
		case "LABEL", "ENV":
			pairs, err := keyValues(in.Args, lookup)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			for _, kv := range pairs {
				if in.Cmd == "LABEL" {
					if img.Config.Labels == nil {
						img.Config.Labels = map[string]string{}
					}
					img.Config.Labels[kv[0]] = kv[1]
					continue
				}
				img.Config.Env = setEnv(img.Config.Env, kv[0], kv[1])
			}
		case "USER", "STOPSIGNAL":
			v, err := oneWord(in.Args, lookup)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			if in.Cmd == "USER" {
				img.Config.User = v
			} else {
				img.Config.StopSignal = v
			}
		case "WORKDIR":
			v, err := oneWord(in.Args, lookup)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			if !path.IsAbs(v) {
				v = path.Join("/", img.Config.WorkingDir, v)
			}
			img.Config.WorkingDir = path.Clean(v)
			if missing := parents(img.Config.WorkingDir+"/x", have); len(missing) > 0 {
				img.Layers = append(img.Layers, Layer{Entries: missing, CreatedBy: createdBy})
				empty = false
			}
		case "EXPOSE", "VOLUME":
			words, ok := execForm(in.Args)
			if !ok || in.Cmd == "EXPOSE" {
				var err error
				if words, err = splitWords(in.Args, lookup); err != nil {
					return nil, fmt.Errorf("%s: %w", where, err)
				}
			}
			for _, w := range words {
				if in.Cmd == "VOLUME" {
					if img.Config.Volumes == nil {
						img.Config.Volumes = map[string]struct{}{}
					}
					img.Config.Volumes[w] = struct{}{}
					continue
				}
				port, proto, hasProto := strings.Cut(w, "/")
				if !hasProto {
					proto = "tcp"
				}
				if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || (proto != "tcp" && proto != "udp" && proto != "sctp") {
					return nil, fmt.Errorf("%s: bad port %q", where, w)
				}
				if img.Config.ExposedPorts == nil {
					img.Config.ExposedPorts = map[string]struct{}{}
				}
				img.Config.ExposedPorts[port+"/"+strings.ToLower(proto)] = struct{}{}
			}
		case "ENTRYPOINT", "CMD":
			words, ok := execForm(in.Args)
			if !ok {
				// The shell form runs /bin/sh -c, and these bases have no shell.
				return nil, fmt.Errorf("%s: only the exec (JSON) form is supported: the base has no /bin/sh", where)
			}
			if in.Cmd == "ENTRYPOINT" {
				img.Config.Entrypoint = words
				// As in `docker build`: a new ENTRYPOINT drops the CMD inherited from the base.
				if !cmdSet {
					img.Config.Cmd = nil
				}
			} else {
				img.Config.Cmd = words
				cmdSet = true
			}
		case "COPY":
			l, err := copyLayer(in, img.Config.WorkingDir, lookup, have, opts)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			img.Layers = append(img.Layers, l)
			createdBy = l.CreatedBy
			empty = false
		default:
			return nil, fmt.Errorf("%s: not supported without a builder (the final stage may only COPY and set config)", where)
		}
		img.History = append(img.History, History{CreatedBy: createdBy, EmptyLayer: empty})
	}
	return img, nil
}

// copyLayer turns one COPY into a layer: files from the build context or, with
// --from, from the host directory standing for that stage's root.
func copyLayer(in Instruction, workdir string, lookup func(string) (string, bool), have map[string]bool, opts Options) (Layer, error) {
	for k := range in.Flags {
		switch k {
		case "from", "chown", "chmod", "link":
		default:
			return Layer{}, fmt.Errorf("flag --%s is not supported", k)
		}
	}
	words, ok := execForm(in.Args)
	if !ok {
		var err error
		if words, err = splitWords(in.Args, lookup); err != nil {
			return Layer{}, err
		}
	}
	if len(words) < 2 {
		return Layer{}, fmt.Errorf("want SRC... DEST")
	}
	srcs, dst := words[:len(words)-1], words[len(words)-1]
	from := in.Flags["from"]
	createdBy := "COPY "
	if from != "" {
		createdBy += "--from=" + from + " "
	}
	createdBy += strings.Join(words, " ")
	if opts.SkipLayers {
		return Layer{CreatedBy: createdBy}, nil
	}
	root := opts.Context
	if from != "" {
		dir, ok := opts.Stages[from]
		if !ok {
			return Layer{}, fmt.Errorf("--from=%s: no host directory given for that stage (-stage %s=DIR)", from, from)
		}
		root = dir
	}
	if root == "" {
		return Layer{}, fmt.Errorf("no build context given (-context DIR)")
	}
	uid, gid := 0, 0
	if c := in.Flags["chown"]; c != "" {
		u, g, hasG := strings.Cut(c, ":")
		var err error
		if uid, err = strconv.Atoi(u); err != nil {
			return Layer{}, fmt.Errorf("--chown=%s: only numeric ids are supported", c)
		}
		gid = uid
		if hasG {
			if gid, err = strconv.Atoi(g); err != nil {
				return Layer{}, fmt.Errorf("--chown=%s: only numeric ids are supported", c)
			}
		}
	}
	var chmod fs.FileMode
	c, hasChmod := in.Flags["chmod"]
	if hasChmod {
		m, err := strconv.ParseUint(c, 8, 32)
		if err != nil || m > 0o7777 {
			return Layer{}, fmt.Errorf("--chmod=%s: want an octal mode", c)
		}
		chmod = unixMode(uint32(m))
	}
	if !path.IsAbs(dst) {
		dst = path.Join("/", workdir, dst)
	}
	intoDir := strings.HasSuffix(dst, "/") || len(srcs) > 1
	dst = path.Clean(dst)

	var entries []Entry
	add := func(p string, info fs.FileInfo, host string) error {
		rel := strings.TrimPrefix(p, "/")
		e := Entry{Path: rel, UID: uid, GID: gid, Mode: info.Mode()}
		switch {
		case info.Mode().IsRegular():
			e.Src = host
		case info.IsDir():
		case info.Mode()&fs.ModeSymlink != 0:
			t, err := os.Readlink(host)
			if err != nil {
				return err
			}
			e.Link = t
		default:
			return fmt.Errorf("%s: not a regular file, directory or symlink", host)
		}
		if hasChmod && info.Mode()&fs.ModeSymlink == 0 {
			e.Mode = e.Mode.Type() | chmod
		}
		entries = append(entries, e)
		return nil
	}
	for _, src := range srcs {
		if strings.ContainsAny(src, "*?[") {
			return Layer{}, fmt.Errorf("%s: wildcards are not supported", src)
		}
		host := filepath.Join(root, filepath.FromSlash(path.Clean("/"+src)))
		info, err := os.Stat(host)
		if err != nil {
			return Layer{}, fmt.Errorf("source %s: %w", src, err)
		}
		if !info.IsDir() {
			target := dst
			if intoDir {
				target = path.Join(dst, path.Base(src))
			}
			if err := add(target, info, host); err != nil {
				return Layer{}, err
			}
			continue
		}
		// A directory: its contents go into dst, as `docker build` does.
		err = filepath.WalkDir(host, func(p string, de fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := de.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(host, p)
			if rel == "." {
				if have[strings.TrimPrefix(dst, "/")] {
					return nil
				}
				return add(dst, info, p)
			}
			return add(path.Join(dst, filepath.ToSlash(rel)), info, p)
		})
		if err != nil {
			return Layer{}, err
		}
	}
	var all []Entry
	for _, e := range entries {
		all = append(all, parents(e.Path, have)...)
		all = append(all, e)
		have[e.Path] = true
	}
	return Layer{Entries: all, CreatedBy: createdBy}, nil
}

// parents returns root-owned 0755 directories for the missing parents of p
// and marks them present.
func parents(p string, have map[string]bool) []Entry {
	var out []Entry
	dir := path.Dir(strings.TrimPrefix(p, "/"))
	var chain []string
	for dir != "." && dir != "/" && dir != "" && !have[dir] {
		chain = append(chain, dir)
		dir = path.Dir(dir)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		out = append(out, Entry{Path: chain[i], Mode: fs.ModeDir | 0o755})
		have[chain[i]] = true
	}
	return out
}

// keyValues parses LABEL and ENV arguments: key=value pairs, or the legacy
// single "key value" form.
func keyValues(args string, lookup func(string) (string, bool)) ([][2]string, error) {
	words, err := splitWords(args, lookup)
	if err != nil {
		return nil, err
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("no arguments")
	}
	if !strings.Contains(words[0], "=") {
		key, rest, _ := strings.Cut(strings.TrimSpace(args), " ")
		value, err := splitWords(strings.TrimSpace(rest), lookup)
		if err != nil {
			return nil, err
		}
		return [][2]string{{key, strings.Join(value, " ")}}, nil
	}
	var out [][2]string
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q: want key=value", w)
		}
		out = append(out, [2]string{k, v})
	}
	return out, nil
}

func oneWord(args string, lookup func(string) (string, bool)) (string, error) {
	words, err := splitWords(args, lookup)
	if err != nil {
		return "", err
	}
	if len(words) != 1 {
		return "", fmt.Errorf("want one argument, got %d", len(words))
	}
	return words[0], nil
}

func setEnv(env []string, k, v string) []string {
	for i, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); name == k {
			env[i] = k + "=" + v
			return env
		}
	}
	return append(env, k+"="+v)
}

func knownBases() []string {
	var names []string
	for n := range bases {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// unixMode converts a Unix mode (0o1777) to an fs.FileMode, whose setuid,
// setgid and sticky bits live elsewhere.
func unixMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	if m&0o4000 != 0 {
		mode |= fs.ModeSetuid
	}
	if m&0o2000 != 0 {
		mode |= fs.ModeSetgid
	}
	if m&0o1000 != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
