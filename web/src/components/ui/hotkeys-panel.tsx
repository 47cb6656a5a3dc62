import { useState } from 'react';
import { setHotkeysEnabled, useHotkeys, useHotkeysEnabled, type Hotkey } from '@/hooks/use-hotkeys';
import { Button } from './button';
import { Dialog, DialogContent } from './dialog';
import { Switch } from './switch';
import styles from './hotkeys-panel.module.css';

/**
 * Hotkeys listens for a game's keys (when switched on) and shows the "?" button that opens their list and the
 * switch. keys is the current game's map.
 */
export function Hotkeys({ keys }: { keys: readonly Hotkey[] }) {
  useHotkeys(keys);
  const enabled = useHotkeysEnabled();
  const [open, setOpen] = useState(false);
  return (
    <>
      <Button
        variant="ghost"
        size="sm"
        className={styles.open}
        onClick={() => {
          setOpen(true);
        }}
      >
        <span aria-hidden="true" className={styles.mark} />
        Hotkeys {enabled ? 'on' : 'off'}
      </Button>
      <Dialog open={open} onOpenChange={setOpen}>
        {open ? (
          <DialogContent
            title="Hotkeys"
            description="Keys work when focus is not in a text field and no modifier key is held."
          >
            <Switch label="Enable hotkeys" checked={enabled} onChange={setHotkeysEnabled} />
            <table className={styles.table}>
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">Action</th>
                </tr>
              </thead>
              <tbody>
                {keys.map((k) => (
                  <tr key={k.key}>
                    <td>
                      <kbd className={styles.kbd}>{k.label}</kbd>
                    </td>
                    <td>{k.description}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </DialogContent>
        ) : null}
      </Dialog>
    </>
  );
}
