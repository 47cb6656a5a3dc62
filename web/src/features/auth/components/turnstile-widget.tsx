import { useEffect, useRef, useState } from 'react';

// Cloudflare Turnstile, rendered explicitly
// (https://developers.cloudflare.com/turnstile/get-started/client-side-rendering/).

const SCRIPT_URL = 'https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit';

interface TurnstileRenderOptions {
  sitekey: string;
  theme?: 'light' | 'dark' | 'auto';
  size?: 'normal' | 'flexible' | 'compact';
  action?: string;
  callback?: (token: string) => void;
  'expired-callback'?: () => void;
  'error-callback'?: () => void;
  'timeout-callback'?: () => void;
}

interface TurnstileApi {
  render(container: HTMLElement, options: TurnstileRenderOptions): string | undefined;
  reset(widgetId?: string): void;
  remove(widgetId: string): void;
}

declare global {
  interface Window {
    turnstile?: TurnstileApi;
  }
}

let loading: Promise<TurnstileApi> | null = null;

function loadTurnstile(): Promise<TurnstileApi> {
  if (window.turnstile) return Promise.resolve(window.turnstile);
  loading ??= new Promise<TurnstileApi>((resolve, reject) => {
    const script = document.createElement('script');
    script.src = SCRIPT_URL;
    script.async = true;
    script.onload = () => {
      if (window.turnstile) resolve(window.turnstile);
      else reject(new Error('Turnstile did not initialise'));
    };
    script.onerror = () => {
      loading = null;
      script.remove();
      reject(new Error('Could not load Turnstile'));
    };
    document.head.appendChild(script);
  });
  return loading;
}

export interface TurnstileWidgetProps {
  siteKey: string;
  action: string;
  /** onToken receives the widget's response, or '' when it expires or fails. */
  onToken: (token: string) => void;
}

export function TurnstileWidget({ siteKey, action, onToken }: TurnstileWidgetProps) {
  const container = useRef<HTMLDivElement>(null);
  const latestOnToken = useRef(onToken);
  const [failed, setFailed] = useState(false);

  useEffect(() => {
    latestOnToken.current = onToken;
  });

  useEffect(() => {
    let cancelled = false;
    let widgetId: string | undefined;
    const emit = (token: string) => {
      latestOnToken.current(token);
    };
    loadTurnstile().then(
      (api) => {
        if (cancelled || !container.current) return;
        widgetId = api.render(container.current, {
          sitekey: siteKey,
          action,
          theme: 'dark',
          size: 'flexible',
          callback: emit,
          'expired-callback': () => {
            emit('');
          },
          'error-callback': () => {
            emit('');
          },
          'timeout-callback': () => {
            emit('');
          },
        });
      },
      () => {
        if (!cancelled) setFailed(true);
      },
    );
    return () => {
      cancelled = true;
      if (widgetId !== undefined) window.turnstile?.remove(widgetId);
    };
  }, [siteKey, action]);

  return (
    <div>
      <div ref={container} />
      {failed ? (
        <p role="alert">The verification widget could not be loaded. Check your connection and reopen this dialog.</p>
      ) : null}
    </div>
  );
}
