//! Binding function calls: aggregates (to the executor's slots), IF and its kin (to CASE),
//! the string, numeric and date functions (to [`Func`]), and INTERVAL arithmetic.

use sqlparser::ast;
use waterline_types::Value;

use super::Binder;
use crate::PlanError;
use crate::exec::{Agg, AggFunc};
use crate::expr::{Case, CmpOp, Expr, Func, FuncKind, TimeUnit};
use crate::walk;

/// The aggregate function `f` calls, if it is one: COUNT, SUM, MIN, MAX or AVG.
pub fn aggregate_func(f: &ast::Function) -> Option<AggFunc> {
    Some(match f.name.to_string().to_ascii_uppercase().as_str() {
        "COUNT" => AggFunc::Count,
        "SUM" => AggFunc::Sum,
        "MIN" => AggFunc::Min,
        "MAX" => AggFunc::Max,
        "AVG" => AggFunc::Avg,
        _ => return None,
    })
}

/// Whether `e` calls an aggregate function anywhere (outside a subquery).
pub fn contains_aggregate(e: &ast::Expr) -> bool {
    use std::ops::ControlFlow;
    walk::exprs(e, |x| match x {
        ast::Expr::Function(f) if aggregate_func(f).is_some() => ControlFlow::Break(()),
        _ => ControlFlow::Continue(()),
    })
    .is_break()
}

impl Binder<'_> {
    /// An aggregate call: bound to the next [`Expr::Agg`] where the clause may call one
    /// (error 1111 elsewhere, and inside another aggregate).
    pub(super) fn aggregate(
        &mut self,
        f: &ast::Function,
        func: AggFunc,
        clause: &'static str,
    ) -> Result<Expr, PlanError> {
        if self.aggregates.is_none() || self.in_aggregate {
            return Err(PlanError::GroupFunction);
        }
        let ast::FunctionArguments::List(list) = &f.args else {
            return Err(PlanError::Parse(f.to_string()));
        };
        if !list.clauses.is_empty() || f.over.is_some() || f.filter.is_some() {
            return Err(PlanError::Unsupported(f.to_string()));
        }
        let distinct = matches!(
            list.duplicate_treatment,
            Some(ast::DuplicateTreatment::Distinct)
        );
        let arg = match list.args.as_slice() {
            [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard)]
                if func == AggFunc::Count && !distinct =>
            {
                None
            }
            [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x))] => {
                self.in_aggregate = true;
                let arg = self.expr(x, clause);
                self.in_aggregate = false;
                Some(arg?)
            }
            [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(_)), ..] if distinct => {
                return Err(PlanError::Unsupported(f.to_string()));
            }
            _ => return Err(PlanError::Parse(f.to_string())),
        };
        let aggregates = self.aggregates.as_mut().expect("checked");
        aggregates.push(Agg {
            func,
            arg,
            distinct,
        });
        Ok(Expr::Agg(aggregates.len() - 1))
    }

    /// `at + INTERVAL n unit` (`minus`: `-`), as DATE_ADD binds it.
    pub(super) fn date_add(
        &mut self,
        at: &ast::Expr,
        interval: &ast::Interval,
        minus: bool,
        clause: &'static str,
    ) -> Result<Expr, PlanError> {
        let unit = interval
            .leading_field
            .as_ref()
            .filter(|_| interval.last_field.is_none())
            .and_then(|f| TimeUnit::named(&f.to_string()))
            .ok_or_else(|| PlanError::Unsupported(format!("INTERVAL {}", interval.value)))?;
        let at = self.expr(at, clause)?;
        let n = self.expr(&interval.value, clause)?;
        let n = if minus { Expr::Neg(Box::new(n)) } else { n };
        Ok(Expr::Func(Box::new(Func {
            kind: FuncKind::DateAdd(unit),
            args: vec![at, n],
        })))
    }

    /// DATE_ADD / ADDDATE and DATE_SUB / SUBDATE with an INTERVAL, and TIMESTAMPDIFF;
    /// `None` for another function.
    pub(super) fn time_function(
        &mut self,
        f: &ast::Function,
        clause: &'static str,
    ) -> Result<Option<Expr>, PlanError> {
        let written = f.name.to_string();
        let name = written.to_ascii_uppercase();
        let add = match name.as_str() {
            "DATE_ADD" | "ADDDATE" => true,
            "DATE_SUB" | "SUBDATE" => false,
            "TIMESTAMPDIFF" => {
                let ast::FunctionArguments::List(list) = &f.args else {
                    return Err(PlanError::ParamCount(written));
                };
                let [unit, a, b] = list.args.as_slice() else {
                    return Err(PlanError::ParamCount(written));
                };
                let arg = |x: &ast::FunctionArg| match x {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Ok(e.clone()),
                    _ => Err(PlanError::Parse(f.to_string())),
                };
                let unit = match arg(unit)? {
                    ast::Expr::Identifier(id) => TimeUnit::named(&id.value),
                    _ => None,
                }
                .ok_or_else(|| PlanError::Parse(f.to_string()))?;
                let args = vec![self.expr(&arg(a)?, clause)?, self.expr(&arg(b)?, clause)?];
                return Ok(Some(Expr::Func(Box::new(Func {
                    kind: FuncKind::TimestampDiff(unit),
                    args,
                }))));
            }
            _ => return Ok(None),
        };
        let ast::FunctionArguments::List(list) = &f.args else {
            return Err(PlanError::ParamCount(written));
        };
        match list.args.as_slice() {
            [
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(at)),
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::Interval(i))),
            ] => self.date_add(at, i, !add, clause).map(Some),
            [_, _] => Err(PlanError::Unsupported(format!(
                "{written} without an INTERVAL"
            ))),
            _ => Err(PlanError::ParamCount(written)),
        }
    }

    /// A function of [`FuncKind::named`]; `None` for another.
    pub(super) fn function(
        &mut self,
        f: &ast::Function,
        clause: &'static str,
    ) -> Result<Option<Expr>, PlanError> {
        let written = f.name.to_string();
        let kind = match FuncKind::named(&written) {
            Some(kind) => kind,
            // UNIX_TIMESTAMP() alone is the session's clock (a session value); with an
            // argument it reads it in the session's time zone, so the binding is for this
            // execution only (the zone may change before the next).
            None if written.eq_ignore_ascii_case("UNIX_TIMESTAMP") => {
                self.volatile = true;
                let offset = self.session.map_or(0, |s| s.utc_offset_secs());
                FuncKind::UnixTimestamp(i32::try_from(offset).unwrap_or(0))
            }
            None => return Ok(None),
        };
        let args = self.arguments(f, clause)?;
        let (least, most) = kind.arity();
        if args.len() < least || args.len() > most {
            return Err(PlanError::ParamCount(written));
        }
        Ok(Some(Expr::Func(Box::new(Func { kind, args }))))
    }

    /// A function call's arguments, bound (none for `f` or `f()`); DISTINCT, a clause inside
    /// the parentheses or a named argument is refused.
    pub(super) fn arguments(
        &mut self,
        f: &ast::Function,
        clause: &'static str,
    ) -> Result<Vec<Expr>, PlanError> {
        let ast::FunctionArguments::List(list) = &f.args else {
            return Ok(Vec::new());
        };
        if list.duplicate_treatment.is_some() || !list.clauses.is_empty() {
            return Err(PlanError::Unsupported(f.to_string()));
        }
        list.args
            .iter()
            .map(|arg| match arg {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => self.expr(x, clause),
                _ => Err(PlanError::Unsupported(f.to_string())),
            })
            .collect()
    }

    /// IF, IFNULL, COALESCE and NULLIF, as the CASE each is; `None` for another function.
    pub(super) fn conditional(
        &mut self,
        f: &ast::Function,
        clause: &'static str,
    ) -> Result<Option<Expr>, PlanError> {
        let written = f.name.to_string();
        let name = written.to_ascii_uppercase();
        if !matches!(name.as_str(), "IF" | "IFNULL" | "COALESCE" | "NULLIF") {
            return Ok(None);
        }
        let args = self.arguments(f, clause)?;
        let not_null = |e: &Expr| Expr::IsNull(Box::new(e.clone()), true);
        let case = match (name.as_str(), args.as_slice()) {
            ("IF", [c, a, b]) => Case {
                operand: None,
                whens: vec![(c.clone(), a.clone())],
                otherwise: Some(b.clone()),
            },
            ("IFNULL", [a, b]) => Case {
                operand: None,
                whens: vec![(not_null(a), a.clone())],
                otherwise: Some(b.clone()),
            },
            ("COALESCE", [all @ .., last]) => Case {
                operand: None,
                whens: all.iter().map(|a| (not_null(a), a.clone())).collect(),
                otherwise: Some(last.clone()),
            },
            ("NULLIF", [a, b]) => Case {
                operand: None,
                whens: vec![(
                    Expr::Cmp(CmpOp::Eq, Box::new(a.clone()), Box::new(b.clone())),
                    Expr::Literal(Value::Null),
                )],
                otherwise: Some(a.clone()),
            },
            // IF is grammar in MySQL, not a function: another count is a syntax error.
            ("IF", _) => {
                return Err(PlanError::Parse(format!("{f}: IF takes three arguments")));
            }
            _ => return Err(PlanError::ParamCount(written)),
        };
        Ok(Some(Expr::Case(Box::new(case))))
    }
}
