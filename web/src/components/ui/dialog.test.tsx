import { render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { Button } from './button';
import { Dialog, DialogClose, DialogContent } from './dialog';

/** Opened from state, as the app's dialogs are, not from a Radix Trigger. */
function Opener({ withField }: { withField: boolean }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <Button>Elsewhere</Button>
      <Button
        onClick={() => {
          setOpen(true);
        }}
      >
        Open
      </Button>
      <Dialog open={open} onOpenChange={setOpen}>
        {open ? (
          <DialogContent title="Example">
            <p>Text first.</p>
            <input type="checkbox" aria-label="A box" />
            {withField ? <input aria-label="Amount" /> : null}
            <DialogClose asChild>
              <Button>Cancel</Button>
            </DialogClose>
          </DialogContent>
        ) : null}
      </Dialog>
    </>
  );
}

describe('DialogContent', () => {
  it('focuses its first field and gives focus back to the opener', async () => {
    const user = userEvent.setup();
    render(<Opener withField />);
    await user.click(screen.getByRole('button', { name: 'Open' }));
    expect(await screen.findByRole('dialog', { name: 'Example' })).toBeInTheDocument();
    await waitFor(() => {
      expect(screen.getByRole('textbox', { name: 'Amount' })).toHaveFocus();
    });
    await user.keyboard('{Escape}');
    await waitFor(() => {
      expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    });
    expect(screen.getByRole('button', { name: 'Open' })).toHaveFocus();

    await user.click(screen.getByRole('button', { name: 'Open' }));
    await user.click(await screen.findByRole('button', { name: 'Cancel' }));
    await waitFor(() => {
      expect(screen.getByRole('button', { name: 'Open' })).toHaveFocus();
    });
  });

  it('without a field, falls back to its first control', async () => {
    const user = userEvent.setup();
    render(<Opener withField={false} />);
    await user.click(screen.getByRole('button', { name: 'Open' }));
    await screen.findByRole('dialog', { name: 'Example' });
    await waitFor(() => {
      expect(screen.getByRole('button', { name: 'Close' })).toHaveFocus();
    });
  });
});
