package acl

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"hash"
	"slices"
	"sync"
	"unsafe"

	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// The ext fields of a signed request.
const (
	FieldAccessKey     = "AccessKey"
	FieldSignature     = "Signature"
	FieldSecurityToken = "SecurityToken"
)

// Credentials sign outgoing requests. The zero value signs nothing.
type Credentials struct {
	AccessKey     string
	SecretKey     string
	SecurityToken string // optional; sent and signed, as Java's client does
}

// Empty reports whether c has no access key, so nothing is signed.
func (c Credentials) Empty() bool { return c.AccessKey == "" }

// Sign adds AccessKey, SecurityToken (if any) and Signature to cmd's ext
// fields, signing them with the body.
func (c Credentials) Sign(cmd *protocol.Command) {
	cmd.SetExt(FieldAccessKey, c.AccessKey)
	if c.SecurityToken != "" {
		cmd.SetExt(FieldSecurityToken, c.SecurityToken)
	}
	delete(cmd.ExtFields, FieldSignature)
	cmd.ExtFields[FieldSignature] = newSigner(c.SecretKey).sign(cmd, cmd.Body, "")
}

// appendSigned adds AccessKey, SecurityToken (if any) and Signature to
// cmd.MoreExt, leaving its ExtFields map alone (it is the caller's: see
// remoting.ClientInterceptor.Append). The peer decodes MoreExt's values
// over the map's, so the signature covers those.
func (c Credentials) appendSigned(s *signer, cmd *protocol.Command) {
	cmd.MoreExt = slices.Grow(cmd.MoreExt, 3)
	cmd.MoreExt = append(cmd.MoreExt, protocol.Field{Key: FieldAccessKey, Value: c.AccessKey})
	if c.SecurityToken != "" {
		cmd.MoreExt = append(cmd.MoreExt, protocol.Field{Key: FieldSecurityToken, Value: c.SecurityToken})
	}
	sig := s.sign(cmd, cmd.Body, "")
	cmd.MoreExt = append(cmd.MoreExt, protocol.Field{Key: FieldSignature, Value: sig})
}

// Interceptor returns the client interceptor that signs every request,
// or nothing if c is empty. It signs at encode time (an Append hook), so
// the request's ext fields are not copied for it.
func (c Credentials) Interceptor() []remoting.ClientInterceptor {
	if c.Empty() {
		return nil
	}
	s := newSigner(c.SecretKey)
	return []remoting.ClientInterceptor{{Append: func(_ string, cmd *protocol.Command) error {
		c.appendSigned(s, cmd)
		return nil
	}, AppendFields: 3}}
}

// Signature computes Base64(HmacSHA1(secretKey, content)), content being
// the values of ext sorted by key, Signature and the key named skip left
// out, followed by body.
func Signature(secretKey string, ext map[string]string, body []byte, skip string) string {
	return newSigner(secretKey).sign(&protocol.Command{ExtFields: ext}, body, skip)
}

// signer signs with one secret key, keeping keyed HMACs for reuse (keying
// one costs two SHA-1 blocks; Reset restores the keyed state).
type signer struct{ macs sync.Pool } // of *keyedMAC

// keyedMAC is one keyed HMAC and what a signature is computed with;
// pooled so that nothing is allocated per request.
type keyedMAC struct {
	mac hash.Hash
	sum [sha1.Size]byte // mac.Sum's destination (an interface call's argument escapes)
}

func newSigner(secretKey string) *signer {
	key := []byte(secretKey)
	s := &signer{}
	s.macs.New = func() any { return &keyedMAC{mac: hmac.New(sha1.New, key)} }
	return s
}

// extFields are a request's ext fields as collected for signing: keys and
// values copied into text (what RangeExtBytes gives is valid only during
// its call), pairs their spans, sorted by key. Pooled: a check collects
// once and reads the access key, the signature and the resources there.
type extFields struct {
	text  []byte
	pairs []pair
	buf   []byte                 // content's result
	add   func(k, v []byte) bool // addBytes, bound once: no closure per request
	body  []byte                 // the request's body, for SignedWith (a Checkpoint's)
}

// pair is one ext field: key text[k0:v0], value text[v0:v1].
type pair struct{ k0, v0, v1 int32 }

var extFieldsPool = sync.Pool{New: func() any {
	f := &extFields{text: make([]byte, 0, 1024), pairs: make([]pair, 0, 24), buf: make([]byte, 0, 512)}
	f.add = f.addBytes
	return f
}}

// collect gathers req's ext fields, MoreExt's after the rest, sorted by
// key; of a key given more than once the last one given comes last (the
// one its peer reads, and the one content signs). Release it when done.
func collect(req *protocol.Command) *extFields {
	f := extFieldsPool.Get().(*extFields)
	f.text, f.pairs = f.text[:0], f.pairs[:0]
	req.RangeExtBytes(f.add)
	for _, m := range req.MoreExt {
		addPair(f, m.Key, m.Value)
	}
	// Insertion sort, stable: a request has a dozen or two fields, mostly
	// in order already (our client sends a send's header sorted, and the
	// signed fields after it).
	ps := f.pairs
	for i := 1; i < len(ps); i++ {
		p := ps[i]
		j := i
		for j > 0 && keyLess(f.key(p), f.key(ps[j-1])) {
			ps[j] = ps[j-1]
			j--
		}
		ps[j] = p
	}
	return f
}

// keyLess orders keys as Java's TreeMap of their strings does (by UTF-16
// unit, which is byte order for the ASCII keys RocketMQ uses); most keys
// differ in their first byte.
func keyLess(a, b []byte) bool {
	if len(a) > 0 && len(b) > 0 && a[0] != b[0] {
		return a[0] < b[0]
	}
	return bytes.Compare(a, b) < 0
}

func (f *extFields) release() {
	f.body = nil
	extFieldsPool.Put(f)
}

// SignedWith makes the collected fields and body the Proof of a remoting
// request (RocketMQ's signature): *extFields is pooled, so a check passes
// it as a Proof without allocating.
func (f *extFields) SignedWith(k Key) bool { return k.s.ok(f, f.body) }

func (f *extFields) addBytes(k, v []byte) bool {
	addPair(f, k, v)
	return true
}

func addPair[T string | []byte](f *extFields, k, v T) {
	k0 := int32(len(f.text))
	f.text = append(f.text, k...)
	v0 := int32(len(f.text))
	f.text = append(f.text, v...)
	f.pairs = append(f.pairs, pair{k0, v0, int32(len(f.text))})
}

func (f *extFields) key(p pair) []byte   { return f.text[p.k0:p.v0] }
func (f *extFields) value(p pair) []byte { return f.text[p.v0:p.v1] }

// get returns the value of key k.
func (f *extFields) get(k string) ([]byte, bool) {
	for i := len(f.pairs) - 1; i >= 0; i-- {
		if string(f.key(f.pairs[i])) == k {
			return f.value(f.pairs[i]), true
		}
	}
	return nil, false
}

// lookup returns the value of key k as a string that aliases f: valid
// until f is released, so a check uses it only while it runs (a refusal's
// message copies it).
func (f *extFields) lookup(k string) (string, bool) {
	v, ok := f.get(k)
	return unsafe.String(unsafe.SliceData(v), len(v)), ok
}

// view is lookup's value, "" when k is absent.
func (f *extFields) view(k string) string {
	v, _ := f.lookup(k)
	return v
}

// content returns the values in key order, each key once (its last
// value), Signature and skip left out.
func (f *extFields) content(skip string) []byte {
	buf := f.buf[:0]
	for i, p := range f.pairs {
		k := f.key(p)
		if i+1 < len(f.pairs) && bytes.Equal(k, f.key(f.pairs[i+1])) {
			continue
		}
		if string(k) == FieldSignature || (skip != "" && string(k) == skip) {
			continue
		}
		buf = append(buf, f.value(p)...)
	}
	f.buf = buf
	return buf
}

func (s *signer) sign(req *protocol.Command, body []byte, skip string) string {
	f := collect(req)
	var sig [sigLen]byte
	out := string(s.sum(&sig, f, body, skip))
	f.release()
	return out
}

// sigLen is the length of a signature: Base64 of a SHA-1.
const sigLen = (sha1.Size + 2) / 3 * 4

// sum writes the signature of f's content and body into dst and returns
// it, allocating nothing (a verifier compares it in place).
func (s *signer) sum(dst *[sigLen]byte, f *extFields, body []byte, skip string) []byte {
	m := s.macs.Get().(*keyedMAC)
	m.mac.Reset()
	m.mac.Write(f.content(skip))
	m.mac.Write(body)
	base64.StdEncoding.Encode(dst[:], m.mac.Sum(m.sum[:0]))
	s.macs.Put(m)
	return dst[:]
}

// ok reports whether f's Signature is s's over f and body, SecurityToken
// signed (Java) or not (the official Go client).
func (s *signer) ok(f *extFields, body []byte) bool {
	got, ok := f.get(FieldSignature)
	if !ok {
		return false
	}
	var sig [sigLen]byte
	if subtle.ConstantTimeCompare(s.sum(&sig, f, body, ""), got) == 1 {
		return true
	}
	if tok, has := f.get(FieldSecurityToken); has && len(tok) > 0 {
		return subtle.ConstantTimeCompare(s.sum(&sig, f, body, FieldSecurityToken), got) == 1
	}
	return false
}

// signatureOK reports whether req is signed with secretKey.
func signatureOK(secretKey string, req *protocol.Command) bool {
	f := collect(req)
	defer f.release()
	return newSigner(secretKey).ok(f, req.Body)
}

// Fields are a request's ext fields collected once for a check, read
// without decoding undecoded ones (so a check built on them can say
// remoting.Interceptor.UndecodedExt). Release them when the check is done.
type Fields struct{ f *extFields }

// Collect gathers req's ext fields, as its peer decodes them.
func Collect(req *protocol.Command) Fields { return Fields{collect(req)} }

// Release returns f to its pool; f and its views must not be used after.
func (f Fields) Release() { f.f.release() }

// View returns ext field k ("" when absent) as a string aliasing f: valid
// until f is released, so a check keeps it only while it runs.
func (f Fields) View(k string) string { return f.f.view(k) }

// Lookup is View, and whether k is there with a value. A field whose value
// is empty counts as absent: it adds nothing to the signed content, so
// anyone can slip one into a signed request, and access control must not
// decide differently for it.
func (f Fields) Lookup(k string) (string, bool) {
	v := f.f.view(k)
	return v, v != ""
}

// Key is one secret key ready to verify signatures with: its keyed HMACs
// are pooled, so one Key per account serves every request without keying
// a new HMAC (ACL 2.0's users keep one each).
type Key struct{ s *signer }

// NewKey prepares secretKey.
func NewKey(secretKey string) Key { return Key{newSigner(secretKey)} }

// Verify reports whether the Signature among f, a request's collected
// fields, is this key's over them and body, SecurityToken signed (Java) or
// not (the official Go client).
func (k Key) Verify(f Fields, body []byte) bool { return k.s.ok(f.f, body) }

// MAC appends HmacSHA1(secret key, the parts one after the other) to dst:
// what a door whose signature is not RocketMQ's remoting one (the gRPC
// door's, over its x-mq-date-time header) compares its request's
// signature with, in constant time (crypto/subtle), in its Proof.
func (k Key) MAC(dst []byte, parts ...[]byte) []byte {
	m := k.s.macs.Get().(*keyedMAC)
	m.mac.Reset()
	for _, p := range parts {
		m.mac.Write(p)
	}
	dst = m.mac.Sum(dst)
	k.s.macs.Put(m)
	return dst
}
