package acl

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"hash"
	"slices"

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
// fields, which must be non-nil, signing them with the body.
func (c Credentials) Sign(cmd *protocol.Command) {
	cmd.ExtFields[FieldAccessKey] = c.AccessKey
	if c.SecurityToken != "" {
		cmd.ExtFields[FieldSecurityToken] = c.SecurityToken
	}
	delete(cmd.ExtFields, FieldSignature)
	cmd.ExtFields[FieldSignature] = Signature(c.SecretKey, cmd.ExtFields, cmd.Body, "")
}

// Interceptor returns the client interceptor that signs every request,
// or nothing if c is empty.
func (c Credentials) Interceptor() []remoting.ClientInterceptor {
	if c.Empty() {
		return nil
	}
	return []remoting.ClientInterceptor{{Request: func(_ string, cmd *protocol.Command) error {
		c.Sign(cmd)
		return nil
	}}}
}

// Signature computes Base64(HmacSHA1(secretKey, content)), content being
// the values of ext sorted by key, Signature and the key named skip left
// out, followed by body.
func Signature(secretKey string, ext map[string]string, body []byte, skip string) string {
	mac := hmac.New(func() hash.Hash { return sha1.New() }, []byte(secretKey))
	writeContent(mac, ext, body, skip)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func writeContent(h hash.Hash, ext map[string]string, body []byte, skip string) {
	var arr [32]string
	keys := arr[:0]
	for k := range ext {
		if k != FieldSignature && k != skip {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		h.Write([]byte(ext[k]))
	}
	h.Write(body)
}

// signatureOK reports whether req's Signature is secretKey's over its
// fields, SecurityToken signed (Java) or not (the official Go client).
func signatureOK(secretKey string, req *protocol.Command) bool {
	got, ok := req.ExtFields[FieldSignature]
	if !ok {
		return false
	}
	if equal(Signature(secretKey, req.ExtFields, req.Body, ""), got) {
		return true
	}
	if _, has := req.ExtFields[FieldSecurityToken]; has {
		return equal(Signature(secretKey, req.ExtFields, req.Body, FieldSecurityToken), got)
	}
	return false
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
