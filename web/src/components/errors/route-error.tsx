import { isRouteErrorResponse, Link, useRouteError } from 'react-router';
import styles from './route-error.module.css';

/** RouteError replaces a route that failed to load or render (e.g. a stale chunk after a deploy). */
export function RouteError() {
  const error = useRouteError();
  console.error(error);
  const notFound = isRouteErrorResponse(error) && error.status === 404;
  return (
    <div role="alert" className={styles.box}>
      <h1>{notFound ? 'Page not found' : 'Something went wrong'}</h1>
      <p>{notFound ? 'There is nothing at this address.' : 'This page could not be shown. Reloading usually helps.'}</p>
      <div className={styles.actions}>
        {!notFound ? (
          <button
            type="button"
            className={styles.button}
            onClick={() => {
              window.location.reload();
            }}
          >
            Reload
          </button>
        ) : null}
        <Link to="/" reloadDocument className={styles.link}>
          Go to Home
        </Link>
      </div>
    </div>
  );
}
