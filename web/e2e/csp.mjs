// watchCSP, shared by the end-to-end scripts (no side effects on import, so
// the scripts that launch their own browser can use it too).

/**
 * Adds to violations every Content-Security-Policy violation of the
 * context's pages — the securitypolicyviolation event on every document it
 * loads, as "<directive> blocked <uri> in <file>:<line>" — and every console
 * error about the CSP or the Permissions-Policy, as "console: <text>".
 * @param {import('playwright-core').BrowserContext} context
 * @param {import('playwright-core').Page} page
 * @param {string[]} violations
 */
export async function watchCSP(context, page, violations) {
  await context.exposeFunction('__fairplayCSPViolation', (v) => violations.push(v));
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__fairplayCSPViolation(
        `${e.effectiveDirective} blocked ${e.blockedURI || '(inline)'} in ${e.sourceFile}:${e.lineNumber}`,
      );
    });
  });
  page.on('console', (msg) => {
    if (msg.type() === 'error' && /Content[- ]Security[- ]Policy|Permissions[- ]Policy/i.test(msg.text())) {
      violations.push(`console: ${msg.text()}`);
    }
  });
}
