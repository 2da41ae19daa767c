-- K1412 language server config for Neovim 0.11+: `vim.lsp.enable('k1412')`.
-- Settings come from `vim.g.k1412` (model, configPath, user, confirmEdits, cmd).
return require('k1412.config').lsp_config()
