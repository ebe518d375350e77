// Package ast: moa's expression tree (gpuci.runners testbed REPLACEMENT; see ../moa.go).
// Only literals exist here: ParseTemplate refuses interpolation.
package ast

// Expr is a node of a parsed template.
type Expr interface {
	Walk(v Visitor) (Expr, error)
}

// Visitor is called on entering and leaving each node.
type Visitor interface {
	Enter(expr Expr) (Visitor, error)
	Exit(expr Expr) (Expr, error)
}

// Template is a template with interpolations; never produced by this replacement.
type Template struct{}

// Walk visits the template.
func (t *Template) Walk(v Visitor) (Expr, error) { return walk(t, v) }

// Literal is text without interpolation.
type Literal struct{ Text string }

// Walk visits the literal.
func (l *Literal) Walk(v Visitor) (Expr, error) { return walk(l, v) }

func walk(expr Expr, v Visitor) (Expr, error) {
	if _, err := v.Enter(expr); err != nil {
		return expr, err
	}
	return v.Exit(expr)
}
