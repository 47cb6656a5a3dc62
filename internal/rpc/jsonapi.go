package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/fairplay/fairplay/internal/accounts"
	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
	"github.com/fairplay/fairplay/internal/gen/fairplay/v1/fairplayv1connect"
	"github.com/fairplay/fairplay/internal/problem"
	"github.com/fairplay/fairplay/internal/routes"
)

// maxBody bounds /api request bodies.
const maxBody = 64 << 10

// jsonChecks are rules about the raw JSON of a request that its typed
// message cannot express, by procedure, applied before it is decoded.
var jsonChecks = map[string]func(map[string]any) error{
	fairplayv1connect.AuthServiceChangePasswordProcedure: checkChangePassword,
}

// strictRequests are the requests whose JSON may hold only their fields:
// an unknown key is refused on /api (knownKeys) and over Connect (the JSON
// codec) instead of being ignored. POST /api/limits replaces the player's
// whole set of limits, and a limit it does not name is none: a misspelt key
// ("daily" for "day", "realityCheck") read as a request to lift every
// limit, loosened in 24 hours, with the reality check off at once (found by
// a review).
var strictRequests = map[protoreflect.FullName]bool{
	(&fairplayv1.SetLimitsRequest{}).ProtoReflect().Descriptor().FullName(): true,
}

// knownKeys refuses an object with a key that is not a field of md (by its
// JSON or proto name), in md's message fields too: 400 'Unknown field
// "loss.daily"'. Other requests ignore unknown keys (clients send extras
// such as confirmPassword); this is for requests where a key left out
// means something.
func knownKeys(md protoreflect.MessageDescriptor) func(map[string]any) error {
	return func(obj map[string]any) error { return unknownKey(md, obj, "") }
}

func unknownKey(md protoreflect.MessageDescriptor, obj map[string]any, prefix string) error {
	fields := md.Fields()
	// In sorted order, so the answer names the same key every time.
	keys := make([]string, 0, len(obj))
	for key := range obj {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		fd := fields.ByJSONName(key)
		if fd == nil {
			fd = fields.ByTextName(key)
		}
		if fd == nil {
			return problem.Invalid(fmt.Sprintf("Unknown field %q", prefix+key))
		}
		if sub, ok := obj[key].(map[string]any); ok && fd.Kind() == protoreflect.MessageKind && !fd.IsList() && !fd.IsMap() {
			if err := unknownKey(fd.Message(), sub, prefix+key+"."); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkChangePassword applies SPEC.md §5's JSON-level rule that the new
// password must be a string ('Password is required'), in the spec's order.
func checkChangePassword(obj map[string]any) error {
	if s, ok := obj["currentPassword"].(string); !ok || s == "" {
		return accounts.ErrCurrentRequired
	}
	v, present := obj["newPassword"]
	if !present || v == nil || v == "" {
		return accounts.ErrNewRequired
	}
	if _, ok := v.(string); !ok {
		return accounts.ErrPasswordRequired
	}
	return nil
}

// transcode serves a unary route as JSON: it reads the body, path and query
// into the request message (SPEC.md's field names, decimals as numbers),
// calls the procedure in process through invoke — the handler method behind
// the very rules Connect's interceptors apply (errors, text, access) — and
// writes the response or {"message"} with the HTTP status of the error's
// code.
func transcode(rt routes.Route, invoke unaryCall, log *slog.Logger) http.Handler {
	in, err := protoregistry.GlobalTypes.FindMessageByName(rt.Procedure.Input().FullName())
	if err != nil {
		panic("rpc: " + err.Error())
	}
	path := rt.ConnectPath()
	check := jsonChecks[path]
	if strictRequests[in.Descriptor().FullName()] {
		if check != nil {
			panic("rpc: " + path + " has a JSON check and is strict")
		}
		check = knownKeys(in.Descriptor())
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		obj, err := readObject(r)
		if err != nil {
			status := http.StatusBadRequest
			if errors.Is(err, errNotJSON) {
				status = http.StatusUnsupportedMediaType
			}
			writeMessage(w, status, err.Error())
			return
		}
		for _, fd := range rt.PathFields {
			obj[fd.JSONName()] = r.PathValue(fd.JSONName())
		}
		// The query fills the fields of a route without a body (a GET, the
		// DELETE of a user); a route whose body is the request ("*") takes
		// nothing from it, as its rule says. A POST with an empty body and
		// its fields in the query is one a cross-site page can send with no
		// Content-Type, and so without a CORS preflight: it decodes to an
		// empty request, which the call refuses. Found by a review playing
		// a hostile outsider.
		if r.URL.RawQuery != "" && rt.Body == "" {
			for key, vals := range r.URL.Query() {
				if _, inBody := obj[key]; !inBody && len(vals) > 0 {
					obj[key] = vals[0]
				}
			}
		}
		if check != nil {
			if err := check(obj); err != nil {
				writeError(r.Context(), log, w, err)
				return
			}
		}
		msg := in.New()
		if err := decodeObject(msg, obj); err != nil {
			var fe *fieldError
			if errors.As(err, &fe) {
				writeMessage(w, http.StatusBadRequest, "Invalid request: "+fe.Error())
				return
			}
			writeMessage(w, http.StatusBadRequest, "Invalid request body")
			return
		}
		// textRule (one of the rules invoke runs) refuses text holding NUL
		// or invalid UTF-8 with the same "Invalid request: ..." and 400.
		// The request's headers as they are (the rules only read them); the
		// handler gets them without the protocol's (invoker copies).
		res, err := invoke(r.Context(), &call{procedure: path, header: r.Header, msg: msg.Interface()})
		if err != nil {
			// errorsOf (the outermost rule) made every error a
			// *connect.Error with a message fit to show.
			ce := new(connect.Error)
			if !errors.As(err, &ce) || ce.Message() == "" {
				writeError(r.Context(), log, w, err)
				return
			}
			for k, v := range ce.Meta() {
				if !protocolHeader(k) {
					w.Header()[k] = v
				}
			}
			writeMessage(w, httpStatus(ce.Code()), ce.Message())
			return
		}
		for k, v := range res.Header() {
			if !protocolHeader(k) {
				w.Header()[k] = v
			}
		}
		reply, ok := res.Any().(proto.Message)
		if !ok {
			writeMessage(w, http.StatusInternalServerError, internalMessage)
			return
		}
		buf := answerBuffers.Get().(*bytes.Buffer)
		defer putAnswerBuffer(buf)
		buf.Reset()
		encodeMessage(buf, reply.ProtoReflect())
		h := w.Header()
		h["Content-Type"] = jsonContentType // shared: see server.securityHeaders
		h["Cache-Control"] = noStore
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(buf.Bytes())
	})
}

// Header values every answer shares (net/http only reads them).
var (
	jsonContentType = []string{"application/json"}
	noStore         = []string{"no-store"}
)

// protocolHeader reports whether a header belongs to the HTTP or Connect
// framing of a call rather than to the call: those of the /api request are
// not passed to the Connect handler, nor its own back.
//
// It runs on every header of every call, so it allocates nothing.
func protocolHeader(k string) bool {
	switch {
	case strings.EqualFold(k, "Content-Type"), strings.EqualFold(k, "Content-Length"),
		strings.EqualFold(k, "Content-Encoding"), strings.EqualFold(k, "Accept-Encoding"),
		strings.EqualFold(k, "Transfer-Encoding"), strings.EqualFold(k, "Connection"), strings.EqualFold(k, "Te"),
		strings.EqualFold(k, "Trailer"), strings.EqualFold(k, "Upgrade"):
		return true
	}
	return hasPrefixFold(k, "connect-") || hasPrefixFold(k, "trailer-")
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
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
	bp := bodyBuffers.Get().(*[]byte)
	defer bodyBuffers.Put(bp)
	body, err := readBody((*bp)[:0], r.Body)
	*bp = body[:0]
	if err != nil {
		return nil, errors.New("Could not read the request body")
	}
	if len(body) > maxBody {
		return nil, errors.New("Request body is too large")
	}
	// Read to its end: closed, net/http does not look for more of it after
	// the handler (an io.CopyN of nothing, two allocations per request).
	_ = r.Body.Close()
	if len(bytes.TrimSpace(body)) == 0 {
		return obj, nil
	}
	if ct == "" {
		return nil, errNotJSON
	}
	v, err := parseJSON(body)
	if err != nil {
		return nil, errors.New("Invalid JSON body")
	}
	o, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("The request body must be a JSON object")
	}
	return o, nil
}

// bodyBuffers hold request bodies while they are parsed (parseJSON copies
// what it keeps): one buffer per request in flight, not a new one per body.
var bodyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// answerBuffers hold answers while they are encoded (Write copies them out).
var answerBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putAnswerBuffer keeps a buffer for the next answer unless a large one
// (an admin's list) grew it: those are rare and let go.
func putAnswerBuffer(b *bytes.Buffer) {
	if b.Cap() <= maxBody {
		answerBuffers.Put(b)
	}
}

// readBody appends up to maxBody+1 bytes of body to buf.
func readBody(buf []byte, body io.Reader) ([]byte, error) {
	lr := io.LimitedReader{R: body, N: maxBody + 1}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// isJSONContentType reports whether a Content-Type is application/json,
// in any case, with or without parameters.
func isJSONContentType(ct string) bool {
	// What browsers and clients send, without parsing it (an allocation
	// per request).
	if ct == "application/json" || ct == "application/json; charset=utf-8" || ct == "application/json;charset=UTF-8" {
		return true
	}
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

// writeJSON writes an /api answer other than a call's reply (an error, the
// CSRF token): never stored by a cache, as no answer of /api is. A shared
// cache may otherwise keep a 404 by heuristic freshness, and with it the
// anti-forgery cookie the answer sets, for every visitor.
func writeJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h["Cache-Control"] = noStore
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
