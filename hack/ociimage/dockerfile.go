package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Instruction is one logical Dockerfile line: its keyword (upper case), the
// --flags before its arguments, and the arguments as written.
type Instruction struct {
	Cmd   string
	Flags map[string]string
	Args  string
	Line  int
}

// Stage is one FROM and the instructions after it.
type Stage struct {
	From         string // the base, with the global ARGs expanded
	Name         string // the AS name, if any
	Instructions []Instruction
	Line         int
}

// Dockerfile is a parsed Dockerfile: the ARGs before the first FROM and the
// stages in order.
type Dockerfile struct {
	GlobalArgs []Instruction
	Stages     []Stage
}

// Final returns the last stage, the one `docker build` tags.
func (d *Dockerfile) Final() *Stage { return &d.Stages[len(d.Stages)-1] }

// StageNamed returns the stage called name, or nil.
func (d *Dockerfile) StageNamed(name string) *Stage {
	for i := range d.Stages {
		if strings.EqualFold(d.Stages[i].Name, name) {
			return &d.Stages[i]
		}
	}
	return nil
}

var directiveRE = regexp.MustCompile(`^#\s*([a-zA-Z][a-zA-Z0-9]*)\s*=\s*(.+?)\s*$`)

// ParseDockerfile splits a Dockerfile into stages and logical instructions:
// parser directives and comments are dropped, continuation lines joined
// (the escape directive is honoured) and leading --flags split off. Global
// ARG defaults, overridden by buildArgs, are expanded in FROM lines.
func ParseDockerfile(r io.Reader, buildArgs map[string]string) (*Dockerfile, error) {
	var (
		d       Dockerfile
		escape  = '\\'
		inHead  = true // parser directives are only read before anything else
		buf     strings.Builder
		start   int
		lineNo  int
		pending bool
	)
	global := map[string]string{}
	flush := func() error {
		pending = false
		text := strings.TrimSpace(buf.String())
		buf.Reset()
		if text == "" {
			return nil
		}
		in, err := splitInstruction(text, start)
		if err != nil {
			return err
		}
		switch {
		case in.Cmd == "FROM":
			words := strings.Fields(in.Args)
			if len(words) != 1 && (len(words) != 3 || !strings.EqualFold(words[1], "AS")) {
				return fmt.Errorf("line %d: FROM wants IMAGE [AS NAME]", in.Line)
			}
			from, err := expand(words[0], func(k string) (string, bool) { v, ok := global[k]; return v, ok })
			if err != nil {
				return fmt.Errorf("line %d: %w", in.Line, err)
			}
			st := Stage{From: from, Line: in.Line}
			if len(words) == 3 {
				st.Name = words[2]
			}
			d.Stages = append(d.Stages, st)
		case len(d.Stages) == 0:
			if in.Cmd != "ARG" {
				return fmt.Errorf("line %d: %s before the first FROM", in.Line, in.Cmd)
			}
			d.GlobalArgs = append(d.GlobalArgs, in)
			name, def, hasDef := strings.Cut(in.Args, "=")
			if v, ok := buildArgs[name]; ok {
				global[name] = v
			} else if hasDef {
				global[name] = unquote(def)
			}
		default:
			st := &d.Stages[len(d.Stages)-1]
			st.Instructions = append(st.Instructions, in)
		}
		return nil
	}

	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if inHead {
			if m := directiveRE.FindStringSubmatch(trimmed); m != nil {
				if strings.EqualFold(m[1], "escape") {
					if m[2] != "\\" && m[2] != "`" {
						return nil, fmt.Errorf("line %d: escape must be \\ or `", lineNo)
					}
					escape = rune(m[2][0])
				}
				continue
			}
			inHead = false
		}
		if strings.HasPrefix(trimmed, "#") || (trimmed == "" && pending) {
			continue // comments, also between continuation lines
		}
		if !pending {
			start = lineNo
		}
		right := strings.TrimRightFunc(line, func(r rune) bool { return r == ' ' || r == '\t' })
		if strings.HasSuffix(right, string(escape)) {
			buf.WriteString(strings.TrimSuffix(right, string(escape)))
			pending = true
			continue
		}
		buf.WriteString(line)
		if err := flush(); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read Dockerfile: %w", err)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if len(d.Stages) == 0 {
		return nil, fmt.Errorf("no FROM")
	}
	return &d, nil
}

// splitInstruction splits "COPY --from=build /a /b" into its keyword, flags
// and arguments. Only instructions that take flags have them split off.
func splitInstruction(text string, line int) (Instruction, error) {
	cmd, rest, _ := strings.Cut(text, " ")
	if i := strings.IndexAny(cmd, "\t"); i >= 0 {
		cmd, rest = text[:i], text[i+1:]
	}
	in := Instruction{Cmd: strings.ToUpper(cmd), Flags: map[string]string{}, Line: line}
	rest = strings.TrimSpace(rest)
	switch in.Cmd {
	case "FROM", "RUN", "COPY", "ADD", "HEALTHCHECK":
		for strings.HasPrefix(rest, "--") {
			word, tail, _ := strings.Cut(rest, " ")
			k, v, _ := strings.Cut(strings.TrimPrefix(word, "--"), "=")
			if k == "" {
				return in, fmt.Errorf("line %d: empty flag", line)
			}
			if _, dup := in.Flags[k]; dup && k != "mount" {
				return in, fmt.Errorf("line %d: flag --%s twice", line, k)
			}
			in.Flags[k] = v
			rest = strings.TrimSpace(tail)
		}
	}
	in.Args = rest
	return in, nil
}

// execForm parses the JSON (exec) form of ENTRYPOINT, CMD, COPY and the like.
// ok is false for the shell form.
func execForm(args string) (words []string, ok bool) {
	if !strings.HasPrefix(strings.TrimSpace(args), "[") {
		return nil, false
	}
	if err := json.Unmarshal([]byte(args), &words); err != nil {
		return nil, false
	}
	return words, true
}

// splitWords splits arguments the way the Dockerfile builder does for
// LABEL, ENV, COPY, EXPOSE and friends: on blanks, with "double" and 'single'
// quotes and backslash escapes, expanding $VAR and ${VAR} (not inside single
// quotes) through lookup.
func splitWords(s string, lookup func(string) (string, bool)) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		have  bool
	)
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch c {
		case ' ', '\t':
			if have {
				words = append(words, cur.String())
				cur.Reset()
				have = false
			}
		case '\\':
			have = true
			if i+1 < len(rs) {
				i++
				cur.WriteRune(rs[i])
			}
		case '\'':
			have = true
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			if j == len(rs) {
				return nil, fmt.Errorf("unterminated ' in %q", s)
			}
			cur.WriteString(string(rs[i+1 : j]))
			i = j
		case '"':
			have = true
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				switch {
				case rs[j] == '\\' && j+1 < len(rs) && strings.ContainsRune(`"\$`, rs[j+1]):
					j++
					cur.WriteRune(rs[j])
				case rs[j] == '$':
					n, err := expandAt(rs, j, lookup, &cur)
					if err != nil {
						return nil, err
					}
					j += n - 1
				default:
					cur.WriteRune(rs[j])
				}
			}
			if j == len(rs) {
				return nil, fmt.Errorf(`unterminated " in %q`, s)
			}
			i = j
		case '$':
			have = true
			n, err := expandAt(rs, i, lookup, &cur)
			if err != nil {
				return nil, err
			}
			i += n - 1
		default:
			have = true
			cur.WriteRune(c)
		}
	}
	if have {
		words = append(words, cur.String())
	}
	return words, nil
}

// expand expands variables in one word (no quoting rules).
func expand(s string, lookup func(string) (string, bool)) (string, error) {
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		if rs[i] != '$' {
			b.WriteRune(rs[i])
			continue
		}
		n, err := expandAt(rs, i, lookup, &b)
		if err != nil {
			return "", err
		}
		i += n - 1
	}
	return b.String(), nil
}

// expandAt expands the variable reference at rs[i] ('$') into b and returns
// how many runes it consumed: $NAME, ${NAME}, ${NAME:-word}, ${NAME:+word}.
func expandAt(rs []rune, i int, lookup func(string) (string, bool), b *strings.Builder) (int, error) {
	isName := func(r rune, first bool) bool {
		return r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (!first && r >= '0' && r <= '9')
	}
	if i+1 < len(rs) && rs[i+1] == '{' {
		end := i + 2
		for end < len(rs) && rs[end] != '}' {
			end++
		}
		if end == len(rs) {
			return 0, fmt.Errorf("unterminated ${ in %q", string(rs))
		}
		inner := string(rs[i+2 : end])
		name, word, op := inner, "", ""
		if k := strings.Index(inner, ":"); k >= 0 {
			name, op, word = inner[:k], inner[k:min(k+2, len(inner))], inner[min(k+2, len(inner)):]
		}
		v, ok := lookup(name)
		switch op {
		case "":
		case ":-":
			if !ok || v == "" {
				v = word
			}
		case ":+":
			if ok && v != "" {
				v = word
			} else {
				v = ""
			}
		default:
			return 0, fmt.Errorf("unsupported expansion ${%s}", inner)
		}
		b.WriteString(v)
		return end - i + 1, nil
	}
	j := i + 1
	for j < len(rs) && isName(rs[j], j == i+1) {
		j++
	}
	if j == i+1 { // a lone $
		b.WriteRune('$')
		return 1, nil
	}
	v, _ := lookup(string(rs[i+1 : j]))
	b.WriteString(v)
	return j - i, nil
}

func unquote(s string) string {
	words, err := splitWords(s, func(string) (string, bool) { return "", false })
	if err != nil || len(words) != 1 {
		return s
	}
	return words[0]
}
