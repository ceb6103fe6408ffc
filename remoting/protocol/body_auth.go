package protocol

import "encoding/json"

// The bodies of the ACL 2.0 admin requests, as Java's fastjson writes
// UserInfo and AclInfo (absent fields are left out, as fastjson leaves out
// nulls).

// UserInfo is a user of ACL 2.0 (Java UserInfo): the body of
// AUTH_CREATE_USER / AUTH_UPDATE_USER and of AUTH_GET_USER's answer;
// AUTH_LIST_USER answers a JSON array of them.
type UserInfo struct {
	Username string `json:"username,omitempty"`
	// Password is the secret key the user signs with.
	Password string `json:"password,omitempty"`
	// UserType is "Super" or "Normal".
	UserType string `json:"userType,omitempty"`
	// UserStatus is "enable" or "disable".
	UserStatus string `json:"userStatus,omitempty"`
}

// ACLInfo is one subject's ACL (Java AclInfo): the body of AUTH_CREATE_ACL
// / AUTH_UPDATE_ACL and of AUTH_GET_ACL's answer; AUTH_LIST_ACL answers a
// JSON array of them.
type ACLInfo struct {
	Subject  string       `json:"subject,omitempty"`
	Policies []PolicyInfo `json:"policies,omitempty"`
}

// PolicyInfo is a policy of an ACL (Java AclInfo.PolicyInfo).
type PolicyInfo struct {
	// PolicyType is "Custom" (what users write) or "Default".
	PolicyType string            `json:"policyType,omitempty"`
	Entries    []PolicyEntryInfo `json:"entries,omitempty"`
}

// PolicyEntryInfo is one rule (Java AclInfo.PolicyEntryInfo).
type PolicyEntryInfo struct {
	// Resource is "Cluster:c", "Topic:t", "Group:g", a name ending in "*"
	// for a prefix, "Topic:*" for any of a type, or "*" for anything.
	Resource string `json:"resource,omitempty"`
	// Actions are of All, Pub, Sub, Create, Update, Delete, Get, List.
	Actions []string `json:"actions,omitempty"`
	// SourceIps are addresses or CIDR ranges; none means from anywhere.
	SourceIps []string `json:"sourceIps,omitempty"`
	// Decision is "Allow" or "Deny".
	Decision string `json:"decision,omitempty"`
}

// DecodeUserInfo reads a UserInfo body.
func DecodeUserInfo(body []byte) (UserInfo, error) {
	var u UserInfo
	err := decodeBody("UserInfo", body, &u)
	return u, err
}

// DecodeACLInfo reads an AclInfo body.
func DecodeACLInfo(body []byte) (ACLInfo, error) {
	var a ACLInfo
	err := decodeBody("AclInfo", body, &a)
	return a, err
}

// EncodeAuthBody writes a UserInfo, an ACLInfo or a slice of either.
func EncodeAuthBody(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil { // plain strings and slices cannot fail
		panic("protocol: " + err.Error())
	}
	return b
}
