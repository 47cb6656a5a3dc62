import { Link } from 'react-router';
import styles from './routes.module.css';

export default function NotFoundRoute() {
  return (
    <div className={styles.message}>
      <title>Not found · Fairplay</title>
      <h1>Page not found</h1>
      <p>There is nothing at this address.</p>
      <Link to="/">Go to Home</Link>
    </div>
  );
}
