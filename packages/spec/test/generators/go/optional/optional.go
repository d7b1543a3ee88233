// Package optional stands in for github.com/antihax/optional, which the Go clients of
// openapi-generator 4.3.1 import for optional parameters. It is not packaged by Debian and the tests
// build offline (no Go module proxy), so the test's go.mod points the import here. It has the same
// API for the types the clients use: New<T>(v), Empty<T>(), Value(), IsSet(). With network access,
// drop the replace directive and Go fetches the real module.
package optional

import "time"

type Bool struct {
	isSet bool
	value bool
}
type Int32 struct {
	isSet bool
	value int32
}
type Int64 struct {
	isSet bool
	value int64
}
type Float32 struct {
	isSet bool
	value float32
}
type Float64 struct {
	isSet bool
	value float64
}
type String struct {
	isSet bool
	value string
}
type Time struct {
	isSet bool
	value time.Time
}
type Interface struct {
	isSet bool
	value interface{}
}

func NewBool(v bool) Bool                  { return Bool{true, v} }
func NewInt32(v int32) Int32               { return Int32{true, v} }
func NewInt64(v int64) Int64               { return Int64{true, v} }
func NewFloat32(v float32) Float32         { return Float32{true, v} }
func NewFloat64(v float64) Float64         { return Float64{true, v} }
func NewString(v string) String            { return String{true, v} }
func NewTime(v time.Time) Time             { return Time{true, v} }
func NewInterface(v interface{}) Interface { return Interface{true, v} }

func EmptyBool() Bool           { return Bool{} }
func EmptyInt32() Int32         { return Int32{} }
func EmptyInt64() Int64         { return Int64{} }
func EmptyFloat32() Float32     { return Float32{} }
func EmptyFloat64() Float64     { return Float64{} }
func EmptyString() String       { return String{} }
func EmptyTime() Time           { return Time{} }
func EmptyInterface() Interface { return Interface{} }

func (v Bool) Value() bool             { return v.value }
func (v Int32) Value() int32           { return v.value }
func (v Int64) Value() int64           { return v.value }
func (v Float32) Value() float32       { return v.value }
func (v Float64) Value() float64       { return v.value }
func (v String) Value() string         { return v.value }
func (v Time) Value() time.Time        { return v.value }
func (v Interface) Value() interface{} { return v.value }

func (v Bool) IsSet() bool      { return v.isSet }
func (v Int32) IsSet() bool     { return v.isSet }
func (v Int64) IsSet() bool     { return v.isSet }
func (v Float32) IsSet() bool   { return v.isSet }
func (v Float64) IsSet() bool   { return v.isSet }
func (v String) IsSet() bool    { return v.isSet }
func (v Time) IsSet() bool      { return v.isSet }
func (v Interface) IsSet() bool { return v.isSet }
