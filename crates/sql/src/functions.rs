//! The values a statement takes from its session wherever they stand in it: `@@variables`,
//! user variables (`@v`, NULL until set), NOW() and the other functions of the current time, DATABASE(), USER() and their kin.
//! The planner's binder asks for them ([`waterline_planner::SessionValues`]) and binds
//! each as a constant.

use sqlparser::ast::{self, Expr as Ast, FunctionArguments};
use waterline_txn::Value;

use crate::error::SqlError;
use crate::session::Context;

/// The value a session function or `@@variable` gives, if `e` is one.
pub(crate) fn session_value(s: &Context<'_>, e: &Ast) -> Result<Option<Value>, SqlError> {
    match e {
        Ast::Identifier(id) if id.value.starts_with("@@") => {
            crate::vars::get(s, &id.value[2..]).map(Some)
        }
        Ast::Identifier(id) if id.value.starts_with('@') => {
            Ok(Some(s.user_variable(&id.value[1..])))
        }
        Ast::CompoundIdentifier(ids) if ids.len() == 2 && ids[0].value.starts_with("@@") => {
            let scope = &ids[0].value[2..];
            crate::vars::get(s, &format!("{scope}.{}", ids[1].value)).map(Some)
        }
        Ast::Function(f) => {
            let name = f.name.to_string().to_ascii_uppercase();
            // NOW(fsp) and its kin take the digits of a second to keep, 0 to 6.
            let fsp = match &f.args {
                FunctionArguments::None => 0,
                FunctionArguments::List(l) if l.args.is_empty() => 0,
                FunctionArguments::List(l) => match l.args.as_slice() {
                    [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(Ast::Value(v)))]
                        if is_time_function(&name) =>
                    {
                        match &v.value {
                            ast::Value::Number(n, _) if n.parse::<u8>().is_ok_and(|d| d <= 6) => {
                                n.parse::<u8>().unwrap_or(0)
                            }
                            _ => {
                                return Err(SqlError::new(
                                    1426,
                                    "42000",
                                    format!(
                                        "Too-big precision {v} specified for '{}'. Maximum is 6.",
                                        name.to_ascii_lowercase()
                                    ),
                                ));
                            }
                        }
                    }
                    _ => return Ok(None),
                },
                _ => return Ok(None),
            };
            if fsp > 0 && !is_time_function(&name) {
                return Ok(None);
            }
            Ok(match name.as_str() {
                "DATABASE" | "SCHEMA" => {
                    Some(s.database().map(|d| &**d).map_or(Value::Null, Value::from))
                }
                "USER" | "CURRENT_USER" | "SESSION_USER" | "SYSTEM_USER" => {
                    Some(Value::from(format!("{}@localhost", s.user())))
                }
                "VERSION" => Some(Value::from(crate::VERSION.to_owned())),
                "CONNECTION_ID" => Some(Value::Int(i64::from(s.connection_id()))),
                "LAST_INSERT_ID" => Some(Value::Int(s.last_insert_id() as i64)),
                "NOW" | "CURRENT_TIMESTAMP" | "LOCALTIME" | "LOCALTIMESTAMP" => {
                    Some(Value::DateTime(s.now(fsp, false)))
                }
                "SYSDATE" => Some(Value::DateTime(s.now(fsp, true))),
                "CURDATE" | "CURRENT_DATE" => Some(Value::Date(s.now(0, false).date())),
                "UTC_DATE" => Some(Value::Date(
                    waterline_txn::DateTime(s.statement_began()).date(),
                )),
                "UTC_TIMESTAMP" => Some(Value::DateTime(waterline_txn::DateTime(
                    crate::settings::truncate_fsp(s.statement_began(), fsp),
                ))),
                "UNIX_TIMESTAMP" => Some(Value::Int(s.statement_began().div_euclid(1_000_000))),
                _ => None,
            })
        }
        _ => Ok(None),
    }
}

/// The functions of the current time that take a precision (fractional digits).
fn is_time_function(name: &str) -> bool {
    matches!(
        name,
        "NOW" | "CURRENT_TIMESTAMP" | "SYSDATE" | "LOCALTIME" | "LOCALTIMESTAMP" | "UTC_TIMESTAMP"
    )
}
