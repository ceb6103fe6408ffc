package acl

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"hash"
	"slices"
	"sync"
	"sync/atomic"

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
	cmd.ExtFields[FieldSignature] = newSigner(c.SecretKey).sign(fieldsOf(cmd), cmd.Body, "")
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
	sig := s.sign(fieldsOf(cmd), cmd.Body, "")
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
	}}}
}

// Signature computes Base64(HmacSHA1(secretKey, content)), content being
// the values of ext sorted by key, Signature and the key named skip left
// out, followed by body.
func Signature(secretKey string, ext map[string]string, body []byte, skip string) string {
	return newSigner(secretKey).sign(fields{m: ext}, body, skip)
}

// AccessKey returns the access key req is signed with, or "".
func AccessKey(req *protocol.Command) string {
	v, _ := fieldsOf(req).get(FieldAccessKey)
	return v
}

// fields are a request's ext fields as its peer decodes them: the map,
// with MoreExt's values over it (a key in both counts once).
type fields struct {
	m    map[string]string
	more []protocol.Field
}

func fieldsOf(req *protocol.Command) fields { return fields{req.Fields(), req.MoreExt} }

func (f fields) get(k string) (string, bool) {
	for i := len(f.more) - 1; i >= 0; i-- {
		if f.more[i].Key == k {
			return f.more[i].Value, true
		}
	}
	v, ok := f.m[k]
	return v, ok
}

// inContent reports whether key k is part of the signed content.
func inContent(k, skip string) bool { return k != FieldSignature && (k != skip || skip == "") }

// count is the number of distinct keys signed.
func (f fields) count(skip string) int {
	n := len(f.m)
	if _, ok := f.m[FieldSignature]; ok {
		n--
	}
	if _, ok := f.m[skip]; ok && skip != "" {
		n--
	}
	for i, fl := range f.more {
		if f.extra(i) && inContent(fl.Key, skip) {
			n++
		}
	}
	return n
}

// extra reports whether more[i] adds a key: not in the map nor earlier in
// more.
func (f fields) extra(i int) bool {
	k := f.more[i].Key
	if _, ok := f.m[k]; ok {
		return false
	}
	for _, o := range f.more[:i] {
		if o.Key == k {
			return false
		}
	}
	return true
}

// signer signs with one secret key, keeping keyed HMACs for reuse (keying
// one costs two SHA-1 blocks; Reset restores the keyed state).
type signer struct{ states sync.Pool } // of *signState

// signState is what one signature is computed with; pooled so that nothing
// is allocated per request.
type signState struct {
	mac hash.Hash
	sum [sha1.Size]byte // mac.Sum's destination (an interface call's argument escapes)
	buf []byte          // the joined ext field values
}

func newSigner(secretKey string) *signer {
	key := []byte(secretKey)
	s := &signer{}
	s.states.New = func() any { return &signState{mac: hmac.New(sha1.New, key), buf: make([]byte, 0, 512)} }
	return s
}

func (s *signer) sign(f fields, body []byte, skip string) string {
	var sig [sigLen]byte
	return string(s.sum(&sig, f, body, skip))
}

// sigLen is the length of a signature: Base64 of a SHA-1.
const sigLen = (sha1.Size + 2) / 3 * 4

// sum writes the signature into dst and returns it, allocating nothing
// (a verifier compares it in place).
func (s *signer) sum(dst *[sigLen]byte, f fields, body []byte, skip string) []byte {
	st := s.states.Get().(*signState)
	st.buf = appendContent(st.buf[:0], f, skip)
	st.mac.Reset()
	st.mac.Write(st.buf)
	st.mac.Write(body)
	base64.StdEncoding.Encode(dst[:], st.mac.Sum(st.sum[:0]))
	s.states.Put(st)
	return dst[:]
}

// appendContent appends the values of f sorted by key, Signature and skip
// left out. Requests of one kind carry the same keys, so the sorted order
// of the last one seen with as many keys is tried first: if each of its
// keys is in f (and the counts agree), the sets are equal and no sort is
// needed — the lookups fetch the values anyway. Otherwise the keys are
// sorted and that order remembered.
func appendContent(buf []byte, f fields, skip string) []byte {
	n := f.count(skip)
	slot := &keyOrders[n%len(keyOrders)]
	if ko := slot.Load(); ko != nil && len(ko.keys) == n && ko.skip == skip {
		start := len(buf)
		hit := true
		for _, k := range ko.keys {
			v, ok := f.get(k)
			if !ok {
				hit = false
				break
			}
			buf = append(buf, v...)
		}
		if hit {
			return buf
		}
		buf = buf[:start]
	}
	keys := make([]string, 0, n)
	for k := range f.m {
		if inContent(k, skip) {
			keys = append(keys, k)
		}
	}
	for i, fl := range f.more {
		if f.extra(i) && inContent(fl.Key, skip) {
			keys = append(keys, fl.Key)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, _ := f.get(k)
		buf = append(buf, v...)
	}
	slot.Store(&keyOrder{skip: skip, keys: keys})
	return buf
}

// keyOrder is a sorted key set; never modified once stored.
type keyOrder struct {
	skip string
	keys []string
}

// keyOrders remembers the last sorted key set of each key count (mod its
// size): what a signer or verifier tries before sorting.
var keyOrders [32]atomic.Pointer[keyOrder]

// ok reports whether req's Signature is s's over its fields,
// SecurityToken signed (Java) or not (the official Go client).
func (s *signer) ok(req *protocol.Command) bool {
	f := fieldsOf(req)
	got, ok := f.get(FieldSignature)
	if !ok {
		return false
	}
	var sig [sigLen]byte
	if equal(s.sum(&sig, f, req.Body, ""), got) {
		return true
	}
	if _, has := f.get(FieldSecurityToken); has {
		return equal(s.sum(&sig, f, req.Body, FieldSecurityToken), got)
	}
	return false
}

// signatureOK reports whether req is signed with secretKey.
func signatureOK(secretKey string, req *protocol.Command) bool { return newSigner(secretKey).ok(req) }

func equal(a []byte, b string) bool { return subtle.ConstantTimeCompare(a, []byte(b)) == 1 }

// Key is one secret key ready to verify signatures with: its keyed HMACs
// are pooled, so one Key per account serves every request without keying
// a new HMAC (ACL 2.0's users keep one each).
type Key struct{ s *signer }

// NewKey prepares secretKey.
func NewKey(secretKey string) Key { return Key{newSigner(secretKey)} }

// Verify reports whether req's Signature is this key's over its fields and
// body, SecurityToken signed (Java) or not (the official Go client).
func (k Key) Verify(req *protocol.Command) bool { return k.s.ok(req) }
