package protocol

// The headers of RocketMQ 5.3's ACL 2.0 admin requests (AUTH_CREATE_USER
// .. AUTH_LIST_ACL, Java's CreateUserRequestHeader and its siblings). Every
// field is optional on the wire: the broker answers a blank one as Java
// does, with INVALID_PARAMETER or NO_PERMISSION and Java's remark.

// AuthUserRequestHeader is the header of AUTH_CREATE_USER,
// AUTH_UPDATE_USER, AUTH_DELETE_USER and AUTH_GET_USER.
type AuthUserRequestHeader struct {
	Username string // username
}

// Encode returns the ext fields.
func (h AuthUserRequestHeader) Encode() map[string]string {
	e := extEncoder{}
	e.str("username", h.Username)
	return e
}

// Decode reads the header.
func (h *AuthUserRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("AUTH_USER", ext)
	*h = AuthUserRequestHeader{Username: d.str("username", false)}
	return d.err
}

// ListUsersRequestHeader is AUTH_LIST_USER's header.
type ListUsersRequestHeader struct {
	Filter string // filter: a substring of the user names listed; "" all
}

// Encode returns the ext fields.
func (h ListUsersRequestHeader) Encode() map[string]string {
	e := extEncoder{}
	e.optStr("filter", h.Filter)
	return e
}

// Decode reads the header.
func (h *ListUsersRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("AUTH_LIST_USER", ext)
	*h = ListUsersRequestHeader{Filter: d.str("filter", false)}
	return d.err
}

// AuthACLRequestHeader is the header of AUTH_CREATE_ACL, AUTH_UPDATE_ACL,
// AUTH_GET_ACL and AUTH_DELETE_ACL; PolicyType and Resource are
// AUTH_DELETE_ACL's only (delete one entry rather than the whole ACL).
type AuthACLRequestHeader struct {
	Subject    string // subject: "User:name"
	PolicyType string // policyType: Custom (default) or Default
	Resource   string // resource: "Topic:t", "Group:g*", "Cluster:c", "*"
}

// Encode returns the ext fields.
func (h AuthACLRequestHeader) Encode() map[string]string {
	e := extEncoder{}
	e.str("subject", h.Subject)
	e.optStr("policyType", h.PolicyType)
	e.optStr("resource", h.Resource)
	return e
}

// Decode reads the header.
func (h *AuthACLRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("AUTH_ACL", ext)
	*h = AuthACLRequestHeader{
		Subject:    d.str("subject", false),
		PolicyType: d.str("policyType", false),
		Resource:   d.str("resource", false),
	}
	return d.err
}

// ListACLsRequestHeader is AUTH_LIST_ACL's header.
type ListACLsRequestHeader struct {
	SubjectFilter  string // subjectFilter: a substring of the subjects listed
	ResourceFilter string // resourceFilter: a substring of a resource they name
}

// Encode returns the ext fields.
func (h ListACLsRequestHeader) Encode() map[string]string {
	e := extEncoder{}
	e.optStr("subjectFilter", h.SubjectFilter)
	e.optStr("resourceFilter", h.ResourceFilter)
	return e
}

// Decode reads the header.
func (h *ListACLsRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("AUTH_LIST_ACL", ext)
	*h = ListACLsRequestHeader{
		SubjectFilter:  d.str("subjectFilter", false),
		ResourceFilter: d.str("resourceFilter", false),
	}
	return d.err
}
