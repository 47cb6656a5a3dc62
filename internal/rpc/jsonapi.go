package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
)

// maxBody bounds /api request bodies.
const maxBody = 64 << 10

// route is one /api path served by a Connect handler method.
type route struct {
	pattern string
	handler http.Handler
}

// routeOption adjusts how a route reads its request.
type routeOption func(*routeConfig)

type routeConfig struct {
	// pathFields maps path wildcards to request field JSON names.
	pathFields map[string]string
	// check runs on the raw JSON object before decoding, for rules about
	// JSON types that the typed Connect API cannot express.
	check func(map[string]any) error
}

// pathField copies the path wildcard {name} into the request field field.
func pathField(name, field string) routeOption {
	return func(c *routeConfig) {
		if c.pathFields == nil {
			c.pathFields = map[string]string{}
		}
		c.pathFields[name] = field
	}
}

// withCheck validates the raw JSON body before it is decoded.
func withCheck(fn func(map[string]any) error) routeOption {
	return func(c *routeConfig) { c.check = fn }
}

// unary serves pattern ("METHOD /api/path") by decoding the JSON body,
// query and path into the request message and calling the Connect method
// itself, so /api and Connect share every line of handler code.
func unary[Req, Res any](log *slog.Logger, pattern string,
	call func(context.Context, *connect.Request[Req]) (*connect.Response[Res], error), opts ...routeOption,
) route {
	var cfg routeConfig
	for _, o := range opts {
		o(&cfg)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		obj, err := readObject(r)
		if err != nil {
			status := http.StatusBadRequest
			if errors.Is(err, errNotJSON) {
				status = http.StatusUnsupportedMediaType
			}
			writeMessage(w, status, err.Error())
			return
		}
		for name, field := range cfg.pathFields {
			obj[field] = r.PathValue(name)
		}
		for key, vals := range r.URL.Query() {
			if _, inBody := obj[key]; !inBody && len(vals) > 0 {
				obj[key] = vals[0]
			}
		}
		if cfg.check != nil {
			if err := cfg.check(obj); err != nil {
				writeError(ctx, log, w, err)
				return
			}
		}
		msg := new(Req)
		pm, ok := any(msg).(proto.Message)
		if !ok {
			panic("rpc: request type is not a proto message")
		}
		if err := decodeObject(pm.ProtoReflect(), obj); err != nil {
			var fe *fieldError
			if errors.As(err, &fe) {
				writeMessage(w, http.StatusBadRequest, "Invalid request: "+fe.Error())
				return
			}
			writeMessage(w, http.StatusBadRequest, "Invalid request body")
			return
		}
		if err := checkText(pm.ProtoReflect()); err != nil {
			writeMessage(w, http.StatusBadRequest, "Invalid request: "+err.Error())
			return
		}
		req := connect.NewRequest(msg)
		for k, v := range r.Header {
			req.Header()[k] = v
		}
		res, err := call(ctx, req)
		if err != nil {
			writeError(ctx, log, w, err)
			return
		}
		for k, v := range res.Header() {
			w.Header()[k] = v
		}
		var buf bytes.Buffer
		encodeMessage(&buf, any(res.Msg).(proto.Message).ProtoReflect())
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(buf.Bytes())
	})
	return route{pattern: pattern, handler: h}
}

// errNotJSON answers (415) a body that is not declared as JSON.
var errNotJSON = errors.New("Content-Type must be application/json")

// readObject reads a JSON object body (an empty body is {}). A body must be
// declared application/json (parameters such as charset allowed), else
// errNotJSON: bodies a cross-site form can send without a CORS preflight
// (text/plain, form encodings) never reach a handler. A request without a
// body (or with only white space) needs no Content-Type, but one it does
// give must be JSON.
func readObject(r *http.Request) (map[string]any, error) {
	obj := map[string]any{}
	if r.Body == nil || r.Method == http.MethodGet || r.Method == http.MethodHead {
		return obj, nil
	}
	ct := r.Header.Get("Content-Type")
	if ct != "" && !isJSONContentType(ct) {
		return nil, errNotJSON
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, errors.New("Could not read the request body")
	}
	if len(body) > maxBody {
		return nil, errors.New("Request body is too large")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return obj, nil
	}
	if ct == "" {
		return nil, errNotJSON
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errors.New("Invalid JSON body")
	}
	if dec.More() {
		return nil, errors.New("Invalid JSON body")
	}
	o, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("The request body must be a JSON object")
	}
	return o, nil
}

// isJSONContentType reports whether a Content-Type is application/json,
// in any case, with or without parameters.
func isJSONContentType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return (err == nil || errors.Is(err, mime.ErrInvalidMediaParameter)) && mt == "application/json"
}

func writeError(ctx context.Context, log *slog.Logger, w http.ResponseWriter, err error) {
	c := classify(ctx, log, err)
	if ce := new(connect.Error); errors.As(err, &ce) {
		for k, v := range ce.Meta() {
			w.Header()[k] = v
		}
	}
	if c.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(c.retryAfter))
	}
	writeMessage(w, c.status, c.message)
}

// writeMessage writes the /api error body {"message": msg}.
func writeMessage(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"message": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
