//! scopebox-receipts.
