//! Walks over sqlparser's AST, each compiled once.
//!
//! sqlparser's `Visit::visit<V: Visitor>` is generic over the visitor, so every visitor type
//! (and every closure handed to `ast::visit_expressions`, which becomes a visitor type of its
//! own) makes the compiler emit the walk over every node kind of the AST again, each node
//! kind with a `stacker` frame for the parser's recursion protection. Fifty walks written the
//! ordinary way made the SQL crates' machine code nine-tenths walk, and their optimized build
//! the longest step of building waterline.
//!
//! Every walk in waterline goes through this module instead. The visitor is passed as a trait
//! object ([`Dyn`], [`DynMut`]), so the walk is emitted once per node type and break type, not
//! once per visitor; the closures of [`exprs`], [`exprs_mut`] and [`relations`] are visitors
//! of that kind. A hook costs one indirect call per node, which a statement's binding, done
//! once per statement, does not notice.
//!
//! ```
//! use std::ops::ControlFlow;
//! use sqlparser::{ast::Expr, dialect::MySqlDialect, parser::Parser};
//! use waterline_planner::walk;
//!
//! let statement = Parser::parse_sql(&MySqlDialect {}, "SELECT a + 1 FROM t WHERE b = 2")
//!     .unwrap()
//!     .remove(0);
//! let mut names = Vec::new();
//! let _ = walk::exprs(&statement, |e| {
//!     if let Expr::Identifier(id) = e {
//!         names.push(id.value.clone());
//!     }
//!     ControlFlow::<()>::Continue(())
//! });
//! assert_eq!(names, ["a", "b"]);
//! ```

use std::ops::ControlFlow;

use sqlparser::ast::{
    Expr, GroupByExpr, Ident, ObjectName, OrderBy, OrderByExpr, Query, Select, Statement,
    TableFactor, ValueWithSpan, Visit, VisitMut, Visitor, VisitorMut,
};

/// Walks `node` with `visitor` (sqlparser's `Visit::visit`, compiled once per node type and
/// break type).
pub fn visit<N: Visit + ?Sized, B>(
    node: &N,
    visitor: &mut dyn Visitor<Break = B>,
) -> ControlFlow<B> {
    node.visit(&mut Dyn(visitor))
}

/// Walks `node` with `visitor`, which may change it (sqlparser's `VisitMut::visit`, compiled
/// once per node type and break type).
pub fn visit_mut<N: VisitMut + ?Sized, B>(
    node: &mut N,
    visitor: &mut dyn VisitorMut<Break = B>,
) -> ControlFlow<B> {
    node.visit(&mut DynMut(visitor))
}

/// `f` on every expression of `node`, outer before inner (as `ast::visit_expressions`).
pub fn exprs<N: Visit + ?Sized, B>(
    node: &N,
    f: impl FnMut(&Expr) -> ControlFlow<B>,
) -> ControlFlow<B> {
    visit(node, &mut ExprFn(f))
}

/// `f` on every expression of `node`, inner before outer, each free to change it (as
/// `ast::visit_expressions_mut`).
pub fn exprs_mut<N: VisitMut + ?Sized, B>(
    node: &mut N,
    f: impl FnMut(&mut Expr) -> ControlFlow<B>,
) -> ControlFlow<B> {
    visit_mut(node, &mut ExprFn(f))
}

/// `f` on every table name of `node` (as `ast::visit_relations`).
pub fn relations<N: Visit + ?Sized, B>(
    node: &N,
    f: impl FnMut(&ObjectName) -> ControlFlow<B>,
) -> ControlFlow<B> {
    visit(node, &mut RelationFn(f))
}

/// A closure as the expression hook of a visitor.
struct ExprFn<F>(F);

impl<B, F: FnMut(&Expr) -> ControlFlow<B>> Visitor for ExprFn<F> {
    type Break = B;

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<B> {
        (self.0)(expr)
    }
}

impl<B, F: FnMut(&mut Expr) -> ControlFlow<B>> VisitorMut for ExprFn<F> {
    type Break = B;

    fn post_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<B> {
        (self.0)(expr)
    }
}

/// A closure as the table-name hook of a visitor.
struct RelationFn<F>(F);

impl<B, F: FnMut(&ObjectName) -> ControlFlow<B>> Visitor for RelationFn<F> {
    type Break = B;

    fn pre_visit_relation(&mut self, relation: &ObjectName) -> ControlFlow<B> {
        (self.0)(relation)
    }
}

/// A visitor behind a trait object: the one visitor type the walk is compiled for.
pub struct Dyn<'a, B>(pub &'a mut dyn Visitor<Break = B>);

/// A changing visitor behind a trait object: the one such type the walk is compiled for.
pub struct DynMut<'a, B>(pub &'a mut dyn VisitorMut<Break = B>);

/// Each hook of sqlparser's visitor traits, handed to the visitor behind the reference.
macro_rules! forward {
    ($($hook:ident($node:ty)),* $(,)?) => {
        impl<B> Visitor for Dyn<'_, B> {
            type Break = B;
            $(
                fn $hook(&mut self, node: &$node) -> ControlFlow<B> {
                    self.0.$hook(node)
                }
            )*
        }

        impl<B> VisitorMut for DynMut<'_, B> {
            type Break = B;
            $(
                fn $hook(&mut self, node: &mut $node) -> ControlFlow<B> {
                    self.0.$hook(node)
                }
            )*
        }
    };
}

forward!(
    pre_visit_query(Query),
    post_visit_query(Query),
    pre_visit_select(Select),
    post_visit_select(Select),
    pre_visit_relation(ObjectName),
    post_visit_relation(ObjectName),
    pre_visit_table_factor(TableFactor),
    post_visit_table_factor(TableFactor),
    pre_visit_expr(Expr),
    post_visit_expr(Expr),
    pre_visit_statement(Statement),
    post_visit_statement(Statement),
    pre_visit_value(ValueWithSpan),
    post_visit_value(ValueWithSpan),
    pre_visit_ident(Ident),
    post_visit_ident(Ident),
    pre_visit_order_by(OrderBy),
    post_visit_order_by(OrderBy),
    pre_visit_order_by_expr(OrderByExpr),
    post_visit_order_by_expr(OrderByExpr),
    pre_visit_group_by(GroupByExpr),
    post_visit_group_by(GroupByExpr),
);

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::{dialect::MySqlDialect, parser::Parser};

    fn parse(sql: &str) -> Statement {
        Parser::parse_sql(&MySqlDialect {}, sql).unwrap().remove(0)
    }

    /// Every hook reaches the visitor behind the trait object, in sqlparser's order.
    #[test]
    fn a_visitor_behind_a_reference_sees_what_it_would_see_directly() {
        #[derive(Default)]
        struct Log(Vec<String>);
        impl Visitor for Log {
            type Break = ();
            fn pre_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
                self.0.push("query".into());
                ControlFlow::Continue(())
            }
            fn pre_visit_relation(&mut self, r: &ObjectName) -> ControlFlow<()> {
                self.0.push(format!("relation {r}"));
                ControlFlow::Continue(())
            }
            fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
                self.0.push(format!("expr {e}"));
                ControlFlow::Continue(())
            }
            fn post_visit_statement(&mut self, _: &Statement) -> ControlFlow<()> {
                self.0.push("statement".into());
                ControlFlow::Continue(())
            }
        }
        let statement = parse("SELECT a FROM t WHERE b IN (SELECT c FROM u)");
        let mut direct = Log::default();
        let _ = statement.visit(&mut direct);
        let mut behind = Log::default();
        let _ = visit(&statement, &mut behind);
        assert_eq!(direct.0, behind.0);
        assert!(
            behind.0.contains(&"relation u".to_owned()),
            "{:?}",
            behind.0
        );
    }

    #[test]
    fn a_break_stops_the_walk_and_is_returned() {
        let statement = parse("SELECT a, b, c FROM t");
        let mut seen = 0;
        let found = exprs(&statement, |e| {
            seen += 1;
            match e {
                Expr::Identifier(id) if id.value == "b" => ControlFlow::Break(id.value.clone()),
                _ => ControlFlow::Continue(()),
            }
        });
        assert_eq!(found, ControlFlow::Break("b".to_owned()));
        assert_eq!(seen, 2);
    }

    #[test]
    fn exprs_mut_changes_inner_expressions_first() {
        let mut statement = parse("SELECT (a + b) * c FROM t");
        let mut order = Vec::new();
        let _ = exprs_mut(&mut statement, |e| {
            order.push(e.to_string());
            if let Expr::Identifier(id) = e {
                id.value = id.value.to_uppercase();
            }
            ControlFlow::<()>::Continue(())
        });
        assert_eq!(order[0], "a");
        assert_eq!(statement.to_string(), "SELECT (A + B) * C FROM t");
        let mut tables = Vec::new();
        let _ = relations(&statement, |r| {
            tables.push(r.to_string());
            ControlFlow::<()>::Continue(())
        });
        assert_eq!(tables, ["t"]);
    }
}
