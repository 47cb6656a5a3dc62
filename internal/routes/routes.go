// Package routes reads the /api routes off the protos: each procedure's
// google.api.http rule gives its HTTP method and path, its
// (fairplay.v1.access) option who may call it, and its request message's
// (fairplay.v1.example) option an example request. The server's routing,
// its access checks, the OpenAPI document and the tests all take them from
// here, so a route is declared once, next to its RPC.
package routes

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
)

// Package is the proto package whose services are served.
const Package = "fairplay.v1"

// Route is one /api route: a procedure and the HTTP binding of its rule.
type Route struct {
	// Method is GET, POST, PUT, PATCH or DELETE.
	Method string
	// Path is the URL path with each variable written {jsonName}, as
	// net/http's patterns and OpenAPI both read it, e.g.
	// /api/games/bets/{betId}.
	Path string
	// PathFields are the request fields the path's variables fill, in
	// order.
	PathFields []protoreflect.FieldDescriptor
	// Body is the rule's body: "*" (every field not in the path comes from
	// the JSON body) or "" (they come from the query).
	Body string
	// Procedure is the RPC the route calls.
	Procedure protoreflect.MethodDescriptor
	// Access is the procedure's access policy.
	Access fairplayv1.Access
}

// Pattern is the route's net/http pattern, e.g. "GET /api/auth/user".
func (r Route) Pattern() string { return r.Method + " " + r.Path }

// ConnectPath is the procedure's Connect path, e.g.
// /fairplay.v1.AuthService/GetUser.
func (r Route) ConnectPath() string { return ConnectPath(r.Procedure) }

// ConnectPath is a procedure's Connect path, e.g.
// /fairplay.v1.AuthService/GetUser.
func ConnectPath(md protoreflect.MethodDescriptor) string {
	return "/" + string(md.Parent().FullName()) + "/" + string(md.Name())
}

// Streaming reports whether the procedure streams its responses.
func (r Route) Streaming() bool {
	return r.Procedure.IsStreamingServer() || r.Procedure.IsStreamingClient()
}

// Example returns the request message's example, as /api JSON.
func (r Route) Example() (string, bool) { return Example(r.Procedure.Input()) }

// Example returns a message's (fairplay.v1.example), as /api JSON.
func Example(md protoreflect.MessageDescriptor) (string, bool) {
	s, _ := proto.GetExtension(md.Options(), fairplayv1.E_Example).(string)
	return s, s != ""
}

// AccessOf returns a procedure's (fairplay.v1.access).
func AccessOf(md protoreflect.MethodDescriptor) fairplayv1.Access {
	a, _ := proto.GetExtension(md.Options(), fairplayv1.E_Access).(fairplayv1.Access)
	return a
}

// Services are the served services, in file and declaration order.
func Services() []protoreflect.ServiceDescriptor {
	var files []protoreflect.FileDescriptor
	protoregistry.GlobalFiles.RangeFilesByPackage(Package, func(f protoreflect.FileDescriptor) bool {
		files = append(files, f)
		return true
	})
	slices.SortFunc(files, func(a, b protoreflect.FileDescriptor) int { return strings.Compare(a.Path(), b.Path()) })
	var out []protoreflect.ServiceDescriptor
	for _, f := range files {
		for i := 0; i < f.Services().Len(); i++ {
			out = append(out, f.Services().Get(i))
		}
	}
	return out
}

// All returns every route of every service, in file and declaration order.
// Every procedure must have exactly one rule and an access policy; a rule
// this package cannot serve is an error (so is a path or pattern twice).
func All() ([]Route, error) {
	var out []Route
	seen := map[string]string{}
	for _, svc := range Services() {
		for i := 0; i < svc.Methods().Len(); i++ {
			md := svc.Methods().Get(i)
			r, err := routeOf(md)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", md.FullName(), err)
			}
			if other, dup := seen[r.Pattern()]; dup {
				return nil, fmt.Errorf("%s: %s is also %s", md.FullName(), r.Pattern(), other)
			}
			seen[r.Pattern()] = string(md.FullName())
			out = append(out, r)
		}
	}
	return out, nil
}

// MustAll is All for start-up and tests: the protos are compiled in, so an
// error is a programming error.
func MustAll() []Route {
	rs, err := All()
	if err != nil {
		panic("routes: " + err.Error())
	}
	return rs
}

func routeOf(md protoreflect.MethodDescriptor) (Route, error) {
	r := Route{Procedure: md, Access: AccessOf(md)}
	if r.Access == fairplayv1.Access_ACCESS_UNSPECIFIED {
		return r, fmt.Errorf("no (fairplay.v1.access) option")
	}
	rule, _ := proto.GetExtension(md.Options(), annotations.E_Http).(*annotations.HttpRule)
	if rule == nil {
		return r, fmt.Errorf("no (google.api.http) rule")
	}
	if len(rule.GetAdditionalBindings()) > 0 || rule.GetResponseBody() != "" {
		return r, fmt.Errorf("additional_bindings and response_body are not supported")
	}
	var template string
	switch p := rule.GetPattern().(type) {
	case *annotations.HttpRule_Get:
		r.Method, template = http.MethodGet, p.Get
	case *annotations.HttpRule_Post:
		r.Method, template = http.MethodPost, p.Post
	case *annotations.HttpRule_Put:
		r.Method, template = http.MethodPut, p.Put
	case *annotations.HttpRule_Patch:
		r.Method, template = http.MethodPatch, p.Patch
	case *annotations.HttpRule_Delete:
		r.Method, template = http.MethodDelete, p.Delete
	default:
		return r, fmt.Errorf("unsupported HTTP pattern %v", rule.GetPattern())
	}
	switch r.Body = rule.GetBody(); {
	case r.Body != "" && r.Body != "*":
		return r, fmt.Errorf("body %q: only \"*\" or none is supported", r.Body)
	case r.Body != "" && (r.Method == http.MethodGet || r.Method == http.MethodDelete):
		return r, fmt.Errorf("a %s has no body", r.Method)
	}
	if !strings.HasPrefix(template, "/api/") {
		return r, fmt.Errorf("path %q is not under /api/", template)
	}
	segs := strings.Split(template, "/")
	for i, seg := range segs {
		if !strings.HasPrefix(seg, "{") {
			if strings.ContainsAny(seg, "{}*:=") {
				return r, fmt.Errorf("path %q: unsupported segment %q", template, seg)
			}
			continue
		}
		name, ok := strings.CutSuffix(seg[1:], "}")
		if !ok || strings.ContainsAny(name, ".=*{}") {
			return r, fmt.Errorf("path %q: only {field} variables of a whole segment are supported", template)
		}
		fd := md.Input().Fields().ByName(protoreflect.Name(name))
		if fd == nil || fd.Kind() != protoreflect.StringKind || fd.IsList() || fd.IsMap() {
			return r, fmt.Errorf("path %q: %s is no string field of %s", template, name, md.Input().FullName())
		}
		r.PathFields = append(r.PathFields, fd)
		segs[i] = "{" + fd.JSONName() + "}"
	}
	r.Path = strings.Join(segs, "/")
	return r, nil
}
