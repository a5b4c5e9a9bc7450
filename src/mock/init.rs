//! `toolgate init`: a working suite skeleton for the user's own catalog.
