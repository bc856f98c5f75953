//! Options with a fixed set of values (what `show` groups by, what `top`
//! groups by): each value has a stable name and a line of help, so a
//! command line, a config file or a UI can list and parse them without
//! the library knowing which.

/// A value among a fixed set, each with a name and a line of help.
pub trait Named: Sized + Copy + 'static {
    /// Every value, in the order they are listed.
    const ALL: &'static [Self];

    /// The stable name (`category`, `program`), as typed and as in JSON.
    fn name(self) -> &'static str;

    /// One line saying what the value means.
    fn help(self) -> &'static str;

    /// The value of a name, if it is one.
    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.name() == name)
    }
}

/// Implements [`Named`] for a fieldless enum, one row a value (its name
/// and its help) in the order [`Named::ALL`] lists them. Given the enum
/// itself (`pub enum E { A => "a", "help"; }`), it declares it too, each
/// value documented by its help.
macro_rules! named {
    (
        $(#[$meta:meta])* $vis:vis enum $ty:ident {
            $($(#[$vmeta:meta])* $value:ident => $name:literal, $help:literal;)*
        }
    ) => {
        $(#[$meta])* $vis enum $ty {
            $(#[doc = $help] $(#[$vmeta])* $value,)*
        }
        $crate::model::named::named!($ty { $($value => $name, $help;)* });
    };
    ($ty:ty { $($value:ident => $name:literal, $help:literal;)* }) => {
        impl $crate::model::Named for $ty {
            const ALL: &'static [$ty] = &[$(Self::$value),*];

            fn name(self) -> &'static str {
                match self {
                    $(Self::$value => $name,)*
                }
            }

            fn help(self) -> &'static str {
                match self {
                    $(Self::$value => $help,)*
                }
            }
        }
    };
    // A sort key that is a [`Figure`](crate::model::Figure) (`Figure(f)`,
    // named and explained as `f`) or one of the other values; `ALL` is
    // written out, in order.
    ($ty:ty = [$($all:expr),* $(,)?] { $($value:ident => $name:literal, $help:literal;)* }) => {
        impl $crate::model::Named for $ty {
            const ALL: &'static [$ty] = &[$($all),*];

            fn name(self) -> &'static str {
                match self {
                    Self::Figure(f) => f.name(),
                    $(Self::$value => $name,)*
                }
            }

            fn help(self) -> &'static str {
                match self {
                    Self::Figure(f) => f.help(),
                    $(Self::$value => $help,)*
                }
            }
        }
    };
}
pub(crate) use named;
