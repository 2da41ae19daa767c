-- K1412 language server config for Neovim 0.11+: `vim.lsp.enable('k1412')`.
-- Settings come from `vim.g.k1412` (model, configPath, user, confirmEdits, cmd); values given with
-- `vim.lsp.config('k1412', { init_options = { ... }, settings = { k1412 = { ... } } })` win over it.
return require('k1412.config').lsp_config()
